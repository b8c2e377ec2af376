/**
 * The running example driven by openid-client v6 as the demo client's backend would use it: the
 * client_credentials grant against the host's quota-guarded /openapi/v1/ping, then RFC 7662
 * introspection and RFC 7009 revocation, and revocation of a user's grant obtained through the
 * example's own login and consent pages.
 */
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Visitor, decideAfterLogin, startExample, type RunningExample } from './support.js';

const CLIENT_ID = 'demo-client';
const CLIENT_SECRET = 'demo-secret';
/** The demo client's scopes (the platform's defaults) less openid and offline_access, which need a user. */
const CLIENT_SCOPE = 'profile email';

/** The demo client's configuration as its backend builds it: discovery, client_secret_basic, http allowed on loopback. */
function discover(base: string, secret = CLIENT_SECRET): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(`${base}/oauth`), CLIENT_ID, undefined, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests],
  });
}

/**
 * Shaped like the platform's tokens (`<16-char grant id>.<43-char secret>`), so the store is
 * really asked, rather than the value being turned away for its format alone.
 */
function unknownToken(): string {
  return `${randomBytes(12).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
}

async function ping(base: string, accessToken: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}/openapi/v1/ping`, { headers: { authorization: `Bearer ${accessToken}` } });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

async function userinfo(base: string, accessToken: string): Promise<{ status: number; challenge: string | null; body: unknown }> {
  const response = await fetch(`${base}/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.json() };
}

/** The OAuth error code of a token request openid-client saw fail (RFC 6749 5.2 JSON body). */
async function oauthErrorOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => expect.unreachable('the token request must fail'),
    (e: unknown) => e,
  );
  expect(error, 'the token request must fail with an OAuth error body').toBeInstanceOf(oidc.ResponseBodyError);
  return (error as oidc.ResponseBodyError).error;
}

describe('openid-client against the running example', () => {
  let example: RunningExample;
  let config: oidc.Configuration;
  let issuer: string;

  beforeAll(async () => {
    example = await startExample();
    issuer = `${example.base}/oauth`;
    config = await discover(example.base);
  });
  afterAll(() => example?.close());

  it('RFC 8414 / OIDC Discovery 3: the example publishes the endpoints the rest of this file relies on', () => {
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(issuer);
    expect(metadata.grant_types_supported).toContain('client_credentials');
    expect(metadata.introspection_endpoint).toBe(`${issuer}/introspect`);
    expect(metadata.revocation_endpoint).toBe(`${issuer}/revoke`);
  });

  describe('the client_credentials grant', () => {
    it('RFC 6749 4.4: an access token for the client itself, with no refresh_token and no id_token, that the guarded ping accepts', async () => {
      const tokens = await oidc.clientCredentialsGrant(config, { scope: CLIENT_SCOPE });
      expect(tokens.access_token).toBeTruthy();
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBeGreaterThan(0);
      expect(tokens.scope?.split(' ').sort()).toStrictEqual(CLIENT_SCOPE.split(' ').sort());
      // RFC 6749 4.4.3: a refresh token SHOULD NOT be included; no user signed in, so no id_token either.
      expect(tokens).not.toHaveProperty('refresh_token');
      expect(tokens).not.toHaveProperty('id_token');
      expect(tokens.claims()).toBeUndefined();

      // The guard names the application and no user: the example must not invent a sub.
      const answer = await ping(example.base, tokens.access_token);
      expect(answer.status).toBe(200);
      expect(answer.body).toStrictEqual({ code: 0, message: 'ok', data: { pong: true, clientId: CLIENT_ID } });
    });

    it('RFC 6749 4.4 / RFC 6750 3.1: userinfo refuses the client’s own token, which speaks for no user', async () => {
      const { access_token } = await oidc.clientCredentialsGrant(config, { scope: CLIENT_SCOPE });
      const answer = await userinfo(example.base, access_token);
      // The token is valid but carries no user: RFC 6750 3.1 makes that insufficient_scope with 403, not 401 invalid_token.
      expect(answer.status).toBe(403);
      expect(answer.challenge).toMatch(/^Bearer\b.*error="insufficient_scope"/);
      expect(answer.body).toMatchObject({ error: 'insufficient_scope' });
      // openid-client's own userinfo call must fail too, and not hand back claims for some subject.
      await expect(oidc.fetchUserInfo(config, access_token, oidc.skipSubjectCheck)).rejects.toThrow();
    });

    it('RFC 6749 3.3 / 5.2: openid and offline_access need a user, so asking for them is invalid_scope', async () => {
      expect(await oauthErrorOf(oidc.clientCredentialsGrant(config, { scope: 'openid' }))).toBe('invalid_scope');
      expect(await oauthErrorOf(oidc.clientCredentialsGrant(config, { scope: 'profile offline_access' }))).toBe('invalid_scope');
    });

    it('RFC 6749 2.3.1 / 5.2: a wrong client secret earns no token', async () => {
      const wrong = await discover(example.base, `${CLIENT_SECRET}x`);
      const refused = await oidc.clientCredentialsGrant(wrong, { scope: CLIENT_SCOPE }).then(
        () => expect.unreachable('a wrong secret must be refused'),
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
      expect((refused as oidc.WWWAuthenticateChallengeError).status).toBe(401);
      expect(await (refused as oidc.WWWAuthenticateChallengeError).response.json()).toMatchObject({ error: 'invalid_client' });
    });
  });

  describe('introspection', () => {
    it('RFC 7662 2.2: the client’s live token is active, with client_id, scope, token_type, exp, iat and iss', async () => {
      const before = Math.floor(Date.now() / 1000);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: CLIENT_SCOPE });
      const after = Math.floor(Date.now() / 1000);

      const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
      expect(introspected.active).toBe(true);
      expect(introspected.client_id).toBe(CLIENT_ID);
      expect(introspected.scope?.split(' ').sort()).toStrictEqual(CLIENT_SCOPE.split(' ').sort());
      expect(introspected.token_type?.toLowerCase()).toBe('bearer');
      expect(introspected.iss).toBe(issuer);
      expect(introspected.iat).toBeGreaterThanOrEqual(before);
      expect(introspected.iat).toBeLessThanOrEqual(after);
      // exp agrees with the expires_in the token response gave (the clock may tick a second in between).
      expect(Math.abs(introspected.exp! - (introspected.iat! + tokens.expires_in!))).toBeLessThanOrEqual(1);
      // No user took part in this grant.
      expect(introspected).not.toHaveProperty('sub');
    });

    it('RFC 7662 2.2: an unknown token is exactly { active: false }', async () => {
      expect(await oidc.tokenIntrospection(config, unknownToken())).toStrictEqual({ active: false });
      expect(await oidc.tokenIntrospection(config, 'not-a-token-of-this-platform')).toStrictEqual({ active: false });
    });

    it('RFC 7662 2.2: a live grant id with a guessed secret is exactly { active: false }', async () => {
      const { access_token } = await oidc.clientCredentialsGrant(config, { scope: CLIENT_SCOPE });
      const grantId = access_token.split('.')[0]!;
      const forged = `${grantId}.${randomBytes(32).toString('base64url')}`;
      expect(await oidc.tokenIntrospection(config, forged)).toStrictEqual({ active: false });
    });
  });

  describe('revocation', () => {
    it('RFC 7009 2.1-2.2: a revoked access token is refused by the guarded ping and introspects as inactive', async () => {
      const { access_token } = await oidc.clientCredentialsGrant(config, { scope: CLIENT_SCOPE });
      // Live before, so the refusals below are the revocation's doing.
      expect((await ping(example.base, access_token)).status).toBe(200);
      expect((await oidc.tokenIntrospection(config, access_token)).active).toBe(true);

      // openid-client resolves only on 200 (RFC 7009 2.2).
      await expect(oidc.tokenRevocation(config, access_token)).resolves.toBeUndefined();

      const refused = await ping(example.base, access_token);
      expect(refused.status).toBe(401);
      expect(await oidc.tokenIntrospection(config, access_token)).toStrictEqual({ active: false });
    });

    it('RFC 7009 2.2: revoking an unknown token, or one already revoked, still answers 200', async () => {
      await expect(oidc.tokenRevocation(config, unknownToken())).resolves.toBeUndefined();

      const { access_token } = await oidc.clientCredentialsGrant(config, { scope: CLIENT_SCOPE });
      await oidc.tokenRevocation(config, access_token);
      await expect(oidc.tokenRevocation(config, access_token)).resolves.toBeUndefined();

      // The same, outside openid-client: the status itself and the no-store the RFC asks of token responses.
      const raw = await fetch(`${issuer}/revoke`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token: unknownToken() }).toString(),
      });
      expect(raw.status).toBe(200);
      expect(raw.headers.get('cache-control')).toBe('no-store');
    });

    it('RFC 7009 2.1: revoking a user’s refresh token ends the grant: refresh is invalid_grant and its access token dies', async () => {
      const visitor = new Visitor(example.base);
      const redirectUri = `${example.base}/callback`;
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const verifier = oidc.randomPKCECodeVerifier();
      const authorizationUrl = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid profile email offline_access',
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });

      // The browser part, through the example's own login and consent pages.
      const approved = await decideAfterLogin(visitor, authorizationUrl.href, 'approve');
      // Not followed: the example's /callback would spend the code; this test is the relying party here.
      expect(approved.location?.pathname).toBe('/callback');

      const tokens = await oidc.authorizationCodeGrant(config, approved.location!, {
        expectedState: state,
        expectedNonce: nonce,
        pkceCodeVerifier: verifier,
        idTokenExpected: true,
      });
      expect(tokens.claims()?.sub).toBe('demo-user-1');
      const refreshToken = tokens.refresh_token;
      expect(refreshToken, 'offline_access earns a refresh token').toBeTruthy();

      // Live before, so what fails afterwards fails because of the revocation.
      expect((await userinfo(example.base, tokens.access_token)).status).toBe(200);
      expect(await oidc.tokenIntrospection(config, refreshToken!, { token_type_hint: 'refresh_token' })).toMatchObject({
        active: true,
        client_id: CLIENT_ID,
        sub: 'demo-user-1',
      });

      await expect(oidc.tokenRevocation(config, refreshToken!, { token_type_hint: 'refresh_token' })).resolves.toBeUndefined();

      expect(await oauthErrorOf(oidc.refreshTokenGrant(config, refreshToken!))).toBe('invalid_grant');
      const afterwards = await userinfo(example.base, tokens.access_token);
      expect(afterwards.status).toBe(401);
      expect(afterwards.challenge).toMatch(/^Bearer\b.*error="invalid_token"/);
      expect((await ping(example.base, tokens.access_token)).status).toBe(401);
      expect(await oidc.tokenIntrospection(config, refreshToken!)).toStrictEqual({ active: false });
      expect(await oidc.tokenIntrospection(config, tokens.access_token)).toStrictEqual({ active: false });
    });
  });
});
