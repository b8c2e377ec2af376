/**
 * The OAuth set-up shared by the OAuth and quota scenarios. Child side: the options of the
 * platform's OAuth server (one confidential client, also allowed client_credentials, a fixed
 * signing key, a test `authenticate` that trusts a request header). Runner side: the
 * authorization code flow over real HTTP (authorize -> consent -> token), as a relying party and
 * its user's browser would walk it.
 */
import type { IncomingMessage } from 'node:http';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { OAuthOptions, OAuthUser } from '../../src/oauth/options.js';

export const BENCH_CLIENT = { id: 'bench-client', name: 'Bench Client', secret: 'bench-client-secret', redirectUri: 'http://127.0.0.1:9/callback' };
/** The "session" of the bench: the platform sees whatever `authenticate` returns for it. */
export const USER_HEADER = 'x-bench-user';
export const BENCH_SCOPE = 'openid profile offline_access';

/** A private RS256 JWK (RS256 is what the platform generates when no key is configured). */
async function generateSigningKey(): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'bench-key', alg: 'RS256' });
}

function userOf(req: IncomingMessage): OAuthUser | null {
  const name = req.headers[USER_HEADER];
  if (typeof name !== 'string' || !/^[a-z0-9-]{1,40}$/.test(name)) return null;
  return { sub: `bench-${name}`, name: `Bench ${name}`, preferred_username: name, email: `${name}@bench.invalid`, email_verified: true };
}

let sharedKey: Promise<string> | undefined;
/** One signing key per bench run, shared by every scenario's servers. */
export function sharedSigningKey(): Promise<string> {
  sharedKey ??= generateSigningKey();
  return sharedKey;
}

/** Child side: the platform's `oauth` options; the store defaults to memory. */
export function benchOAuthOptions<Req extends IncomingMessage>(publicUrl: string, signingKeyJson: string): OAuthOptions<Req> {
  return {
    publicUrl,
    authenticate: (req) => userOf(req),
    // A plain secret: hashed with scrypt at start-up and verified with scrypt on every token request.
    // client_credentials is opt-in (it needs the secret): the oauth scenario measures it too.
    clients: [
      {
        id: BENCH_CLIENT.id,
        name: BENCH_CLIENT.name,
        secret: BENCH_CLIENT.secret,
        redirectUris: [BENCH_CLIENT.redirectUri],
        grants: ['authorization_code', 'refresh_token', 'client_credentials'],
      },
    ],
    signingKeys: [JSON.parse(signingKeyJson) as JWK],
  };
}

export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  scope: string;
}

export const clientBasicAuth = `Basic ${Buffer.from(`${encodeURIComponent(BENCH_CLIENT.id)}:${encodeURIComponent(BENCH_CLIENT.secret)}`).toString('base64')}`;

const unescapeHtml = (value: string) =>
  value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

async function call(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
}

/**
 * Runner side: one grant for `user` through the real HTTP flow (authorize, approve on the consent
 * page when shown, exchange the code with client_secret_basic). Throws with the answer on any
 * unexpected step.
 */
export async function authorizeGrant(baseUrl: string, user: string, scope = BENCH_SCOPE): Promise<TokenSet> {
  const session = { [USER_HEADER]: user };
  const state = `st-${user}`;
  const query = new URLSearchParams({ response_type: 'code', client_id: BENCH_CLIENT.id, redirect_uri: BENCH_CLIENT.redirectUri, scope, state });
  let res = await call(`${baseUrl}/oauth/authorize?${query}`, { headers: session });
  if (res.status === 200) {
    const page = await res.text();
    const match = /<input type="hidden" name="transaction" value="([^"]*)">/.exec(page);
    if (!match) throw new Error(`authorize for ${user}: a 200 page without a consent form: ${page.slice(0, 300)}`);
    res = await call(`${baseUrl}/oauth/consent`, {
      method: 'POST',
      headers: { ...session, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ transaction: unescapeHtml(match[1]!), decision: 'approve' }).toString(),
    });
  }
  const location = res.headers.get('location');
  // 302 answers the GET, 303 the consent form's POST (RFC 9700 4.12).
  if ((res.status !== 302 && res.status !== 303) || !location) throw new Error(`authorize for ${user}: expected a redirect, got HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
  const callback = new URL(location);
  const code = callback.searchParams.get('code');
  if (!code || callback.searchParams.get('state') !== state) throw new Error(`authorize for ${user}: the callback has no code: ${location}`);

  res = await call(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { authorization: clientBasicAuth, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: BENCH_CLIENT.redirectUri }).toString(),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`token for ${user}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as TokenSet;
}

/** Runs `work` over `items` with at most `limit` at a time; keeps the order of the results. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}
