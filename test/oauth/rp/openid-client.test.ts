/**
 * An independent, certified relying party drives the whole flow: openid-client v6 does discovery,
 * builds the authorization URL (PKCE S256, state, nonce), exchanges the code (it checks the
 * id_token signature against the JWKS, nonce, the RFC 9207 `iss` parameter and state), fetches
 * userinfo and refreshes. The "browser" in between is fetch with `redirect: 'manual'` and the test
 * session header. It runs on every adapter with the memory store, and on Express with the Redis
 * and PostgreSQL stores; some hosts derive the issuer from the Host header, others get publicUrl.
 *
 * Whole though past 350 lines: each case's tests run in order on one server as one sign-in (the
 * code flow's tokens feed userinfo and the refresh), and every helper above the suite (the stores,
 * the browser steps, the error readers) serves this suite alone.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import * as oidc from 'openid-client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashClientSecret } from '../../../src/oauth/client-secret.js';
import type { OAuthOptions } from '../../../src/oauth/options.js';
import { createMemoryOAuthStore, createPostgresOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../../src/oauth/store/index.js';
import { ADAPTER_NAMES, CONFIDENTIAL, ENCODED, listen, oauthHost, oauthTestOptions, USERS, type AdapterName } from '../../support/oauth.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../../support/services.js';

// ---------------------------------------------------------------------------------------------
// Stores

interface StoreHandle {
  store: OAuthStore;
  cleanup(): Promise<void>;
}

type StoreName = 'memory' | 'Redis' | 'PostgreSQL';

/** Deletes every key under a prefix (SCAN, never KEYS: the server is shared). */
async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

const STORES: Record<StoreName, () => Promise<StoreHandle>> = {
  memory: async () => ({ store: createMemoryOAuthStore(), cleanup: async () => {} }),
  Redis: async () => {
    const client = new Redis(redisUrl!, { maxRetriesPerRequest: 2 });
    const prefix = `${uniqueName('rp')}:`;
    return {
      store: createRedisOAuthStore({ client, prefix }),
      cleanup: async () => {
        try {
          await deleteKeys(client, prefix);
        } finally {
          await client.quit();
        }
      },
    };
  },
  PostgreSQL: async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    const schema = uniqueName('rp');
    return {
      store: createPostgresOAuthStore({ pool, schema }),
      cleanup: async () => {
        try {
          await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await pool.end();
        }
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Host options, made once per file: one RSA signing key and the clients' secrets hashed once
// (with the real hashClientSecret), so five hosts do not each generate a key and run scrypt.

let sharedOptions: Promise<OAuthOptions> | undefined;
function hostOptions(): Promise<OAuthOptions> {
  sharedOptions ??= (async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
    const key: JWK = { ...(await exportJWK(privateKey)), kid: 'rp-test-key' };
    const clients = await Promise.all(
      (oauthTestOptions().clients ?? []).map(async ({ secret, ...client }) =>
        secret === undefined ? client : { ...client, secretHash: await hashClientSecret(secret) },
      ),
    );
    // No retry grace: a rotated refresh token presented again is a reuse at once (RFC 9700 4.14.2).
    return oauthTestOptions({ clients, signingKeys: [key], refreshRetryGraceSeconds: 0 });
  })();
  return sharedOptions;
}

// ---------------------------------------------------------------------------------------------
// The relying party's helpers

const SCOPE = 'openid profile email offline_access';
const ALICE = USERS.alice!;
const SESSION = { 'x-test-user': 'alice' };

/** What userinfo and the id_token may release for openid profile email. */
const ALICE_CLAIMS = {
  sub: ALICE.sub,
  name: ALICE.name,
  preferred_username: ALICE.preferred_username,
  email: ALICE.email,
  email_verified: ALICE.email_verified,
};

interface Registered {
  id: string;
  name: string;
  secret: string;
  redirectUri: string;
}

interface Authorization {
  /** The URL the browser was finally sent to: redirect_uri with code, state and iss. */
  callbackUrl: URL;
  state: string;
  nonce: string;
  verifier: string;
  /** Whether the consent page was shown (false when consent was remembered). */
  consentShown: boolean;
}

/** openid-client against the issuer, authenticating with client_secret_basic (the only secret method the server takes). */
function discover(issuer: string, client: Registered): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(issuer), client.id, undefined, oidc.ClientSecretBasic(client.secret), {
    execute: [oidc.allowInsecureRequests],
  });
}

function decodeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * The browser's part: open the authorization URL signed in as alice, approve on the consent page
 * when it is shown, and follow the redirect no further than the relying party's callback.
 */
async function authorizeInBrowser(config: oidc.Configuration, client: Registered): Promise<Authorization> {
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: client.redirectUri,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  expect(url.href.startsWith(config.serverMetadata().authorization_endpoint!)).toBe(true);

  let response = await fetch(url, { redirect: 'manual', headers: SESSION });
  let consentShown = false;
  if (response.status === 200) {
    consentShown = true;
    const html = await response.text();
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).toContain(client.name.replace(/&/g, '&amp;'));
    const transaction = /<input type="hidden" name="transaction" value="([^"]*)">/.exec(html)?.[1];
    const action = /<form method="post" action="([^"]*)">/.exec(html)?.[1];
    expect(transaction, 'the consent page carries its transaction').toBeDefined();
    expect(action).toBe(`${config.serverMetadata().issuer}/consent`);
    response = await fetch(decodeHtml(action!), {
      method: 'POST',
      redirect: 'manual',
      headers: { ...SESSION, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ transaction: decodeHtml(transaction!), decision: 'approve' }),
    });
  }
  expect(response.status, `expected a redirect to the client, got ${response.status}`).toBe(consentShown ? 303 : 302);
  const callbackUrl = new URL(response.headers.get('location')!);
  expect(`${callbackUrl.origin}${callbackUrl.pathname}`).toBe(client.redirectUri);
  expect(callbackUrl.searchParams.get('code')).toBeTruthy();
  expect(callbackUrl.searchParams.get('state')).toBe(state);
  expect(callbackUrl.searchParams.get('iss')).toBe(config.serverMetadata().issuer);
  return { callbackUrl, state, nonce, verifier, consentShown };
}

function exchange(config: oidc.Configuration, authorization: Authorization) {
  return oidc.authorizationCodeGrant(config, authorization.callbackUrl, {
    expectedState: authorization.state,
    expectedNonce: authorization.nonce,
    pkceCodeVerifier: authorization.verifier,
    idTokenExpected: true,
  });
}

/** OIDC Core 3.1.3.6 (openid-client leaves at_hash to the caller): left half of SHA-256, base64url. */
function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/** userinfo's status with a bearer token, outside openid-client (which throws on any error). */
async function userinfoStatus(config: oidc.Configuration, accessToken: string): Promise<number> {
  const response = await fetch(config.serverMetadata().userinfo_endpoint!, { headers: { authorization: `Bearer ${accessToken}` } });
  await response.arrayBuffer();
  return response.status;
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('the request must fail'),
    (e: unknown) => e,
  );
}

/** The OAuth error code of a rejected token request (RFC 6749 5.2 JSON body). */
async function oauthErrorOf(promise: Promise<unknown>): Promise<string> {
  const error = await rejectionOf(promise);
  expect(error, 'the token request must fail with an OAuth error body').toBeInstanceOf(oidc.ResponseBodyError);
  return (error as oidc.ResponseBodyError).error;
}

/** openid-client's own check of the authorization response failed, before any token request. */
async function responseCheckFailure(promise: Promise<unknown>): Promise<string> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error & { code?: string }).code).toBe('OAUTH_INVALID_RESPONSE');
  const cause = (error as Error).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}

// ---------------------------------------------------------------------------------------------
// The suite for one adapter and one store

interface Case {
  adapter: AdapterName;
  store: StoreName;
  /** true: publicUrl is the listening origin; false: the issuer comes from the Host header. */
  publicUrl: boolean;
}

function relyingPartySuite({ adapter, store: storeName, publicUrl }: Case): void {
  describe(`${adapter} + ${storeName} store, ${publicUrl ? 'publicUrl set' : 'issuer from the Host header'}`, () => {
    let storeHandle: StoreHandle | undefined;
    let server: Awaited<ReturnType<typeof listen>> | undefined;
    let issuer: string;
    let rp: oidc.Configuration;
    let tokens: Awaited<ReturnType<typeof exchange>> | undefined;

    beforeAll(async () => {
      storeHandle = await STORES[storeName]();
      // Listen first, so the host can be built knowing its own origin.
      let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
        res.statusCode = 503;
        res.end();
      };
      server = await listen((req, res) => handler(req, res));
      const host = oauthHost(adapter, { ...(await hostOptions()), store: storeHandle.store, ...(publicUrl ? { publicUrl: server.url } : {}) });
      handler = host.listener;
      await host.ready();
      issuer = `${server.url}/oauth`;
      rp = await discover(issuer, CONFIDENTIAL);
    });

    afterAll(async () => {
      await server?.close();
      await storeHandle?.cleanup();
    });

    it('discovers the issuer {origin}/oauth with PKCE S256, client_secret_basic and RFC 9207', () => {
      const metadata = rp.serverMetadata();
      expect(metadata.issuer).toBe(issuer);
      expect(metadata.authorization_endpoint).toBe(`${issuer}/authorize`);
      expect(metadata.token_endpoint).toBe(`${issuer}/token`);
      expect(metadata.userinfo_endpoint).toBe(`${issuer}/userinfo`);
      expect(metadata.jwks_uri).toBe(`${issuer}/jwks`);
      expect(metadata.supportsPKCE('S256')).toBe(true);
      expect(metadata.token_endpoint_auth_methods_supported).toContain('client_secret_basic');
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    });

    it('completes the code flow: openid-client verifies state, iss, PKCE, the id_token signature and nonce', async () => {
      const authorization = await authorizeInBrowser(rp, CONFIDENTIAL);
      expect(authorization.consentShown, 'a fresh store has no remembered consent').toBe(true);
      tokens = await exchange(rp, authorization);

      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBeGreaterThan(0);
      expect(tokens.scope?.split(' ').sort()).toStrictEqual(SCOPE.split(' ').sort());
      expect(tokens.refresh_token, 'offline_access earns a refresh token').toBeTruthy();
      const claims = tokens.claims()!;
      expect(claims).toMatchObject({ ...ALICE_CLAIMS, iss: issuer, aud: CONFIDENTIAL.id, nonce: authorization.nonce });
      expect(claims.at_hash).toBe(atHash(tokens.access_token));
      expect(typeof claims.auth_time).toBe('number');
    });

    it('fetches userinfo with alice’s claims for openid profile email', async () => {
      expect(tokens, 'the code flow test ran first').toBeDefined();
      const userinfo = await oidc.fetchUserInfo(rp, tokens!.access_token, tokens!.claims()!.sub);
      expect(userinfo).toStrictEqual(ALICE_CLAIMS);
    });

    it('refreshes with rotation; reusing the rotated refresh token revokes the whole grant', async () => {
      expect(tokens, 'the code flow test ran first').toBeDefined();
      const first = tokens!.refresh_token!;
      const refreshed = await oidc.refreshTokenGrant(rp, first);
      expect(refreshed.access_token).not.toBe(tokens!.access_token);
      expect(refreshed.refresh_token).toBeTruthy();
      expect(refreshed.refresh_token).not.toBe(first);
      const userinfo = await oidc.fetchUserInfo(rp, refreshed.access_token, ALICE.sub);
      expect(userinfo).toStrictEqual(ALICE_CLAIMS);

      // The rotated token comes back: it leaked, so the grant ends...
      expect(await oauthErrorOf(oidc.refreshTokenGrant(rp, first))).toBe('invalid_grant');
      // ...and the token that replaced it, and the tokens issued from it, die with it.
      expect(await oauthErrorOf(oidc.refreshTokenGrant(rp, refreshed.refresh_token!))).toBe('invalid_grant');
      expect(await userinfoStatus(rp, refreshed.access_token)).toBe(401);
    });

    it('refuses a second use of a code and revokes what the first use issued', async () => {
      const authorization = await authorizeInBrowser(rp, CONFIDENTIAL);
      expect(authorization.consentShown, 'consent for the same scopes is remembered').toBe(false);
      const issued = await exchange(rp, authorization);
      expect(await userinfoStatus(rp, issued.access_token)).toBe(200);
      expect(await oauthErrorOf(exchange(rp, authorization))).toBe('invalid_grant');
      expect(await userinfoStatus(rp, issued.access_token)).toBe(401);
      expect(await oauthErrorOf(oidc.refreshTokenGrant(rp, issued.refresh_token!))).toBe('invalid_grant');
    });

    it('openid-client rejects a callback whose state or iss is not the expected one', async () => {
      const authorization = await authorizeInBrowser(rp, CONFIDENTIAL);
      expect(await responseCheckFailure(exchange(rp, { ...authorization, state: oidc.randomState() }))).toMatch(/"state"/);
      const forged = new URL(authorization.callbackUrl);
      forged.searchParams.set('iss', 'http://attacker.invalid/oauth');
      expect(await responseCheckFailure(exchange(rp, { ...authorization, callbackUrl: forged }))).toMatch(/"iss"/);
      const stripped = new URL(authorization.callbackUrl);
      stripped.searchParams.delete('iss');
      expect(await responseCheckFailure(exchange(rp, { ...authorization, callbackUrl: stripped }))).toMatch(/"iss"/);
      // Neither check spent the code: the genuine callback still completes.
      const issued = await exchange(rp, authorization);
      expect(issued.claims()?.nonce).toBe(authorization.nonce);
    });

    it('takes form-encoded Basic credentials: a client id and secret with reserved characters, end to end', async () => {
      const encodedRp = await discover(issuer, ENCODED);
      const authorization = await authorizeInBrowser(encodedRp, ENCODED);
      const issued = await exchange(encodedRp, authorization);
      expect(issued.claims()).toMatchObject({ aud: ENCODED.id, sub: ALICE.sub, nonce: authorization.nonce });
      expect(await oidc.fetchUserInfo(encodedRp, issued.access_token, ALICE.sub)).toStrictEqual(ALICE_CLAIMS);
      const refreshed = await oidc.refreshTokenGrant(encodedRp, issued.refresh_token!);
      expect(refreshed.refresh_token).not.toBe(issued.refresh_token);

      // The same client with a wrong secret is turned away with the Basic challenge.
      const wrong = await discover(issuer, { ...ENCODED, secret: `${ENCODED.secret}x` });
      const refused = await rejectionOf(oidc.refreshTokenGrant(wrong, refreshed.refresh_token!));
      expect(refused).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
      const challenge = refused as oidc.WWWAuthenticateChallengeError;
      expect(challenge.status).toBe(401);
      expect(challenge.cause.map((c) => c.scheme)).toContain('basic');
      expect(await challenge.response.json()).toMatchObject({ error: 'invalid_client' });
      // The rejected attempt did not touch the grant: the right secret still refreshes.
      await oidc.refreshTokenGrant(encodedRp, refreshed.refresh_token!);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The matrix: every adapter on memory; Express on Redis and PostgreSQL.

describe('openid-client as the relying party', () => {
  ADAPTER_NAMES.forEach((adapter, i) => relyingPartySuite({ adapter, store: 'memory', publicUrl: i % 2 === 1 }));
});

describeRedis('openid-client as the relying party (Redis)', () => {
  relyingPartySuite({ adapter: 'express', store: 'Redis', publicUrl: false });
});

describePostgres('openid-client as the relying party (PostgreSQL)', () => {
  relyingPartySuite({ adapter: 'express', store: 'PostgreSQL', publicUrl: true });
});
