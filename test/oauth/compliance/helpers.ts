/**
 * The compliance suite's view of the OAuth server: a real listening host per test (so the issuer,
 * `{origin}/oauth`, stays the same across requests), an injected clock, and the steps of the
 * authorization code flow as a relying party performs them over HTTP.
 */
import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import type { CourierPlatformOptions } from '../../../src/options.js';
import type { Platform } from '../../../src/platform.js';
import type { OAuthOptions } from '../../../src/oauth/options.js';
import type { OAuthStore } from '../../../src/oauth/store/index.js';
import { CONFIDENTIAL, cheapClients, listen, oauthHost, oauthTestOptions, sharedSigningKey, type AdapterName } from '../../support/oauth.js';

export { CONFIDENTIAL, ENCODED, OTHER, PUBLIC, SERVICE, USERS, ADAPTER_NAMES, rsaSigningKey } from '../../support/oauth.js';
export type { AdapterName };

// ---------------------------------------------------------------------------------------------
// Clock

/** The platform's clock (`now` option). Starts far from the wall clock so nothing can lean on it. */
export interface TestClock {
  now(): number;
  /** Seconds since the epoch, as auth_time and id_token times count. */
  seconds(): number;
  advance(seconds: number): void;
}

/**
 * `store` whose rotation, once `loseNext()` was called, commits and then fails on the way back
 * (a timeout or a reset after the write): the refresh answers 503 and its tokens were stored.
 */
export function losingRotationAnswers(store: OAuthStore): { store: OAuthStore; loseNext(): void } {
  let lose = false;
  return {
    store: {
      ...store,
      rotateRefreshToken: async (presented, next, grace, lateWriteMs) => {
        const outcome = await store.rotateRefreshToken(presented, next, grace, lateWriteMs);
        if (!lose) return outcome;
        lose = false;
        throw new Error('connection reset by the store');
      },
    },
    loseNext: () => {
      lose = true;
    },
  };
}

export function testClock(startMs = Date.UTC(2031, 4, 12, 8, 30, 0)): TestClock {
  let at = startMs;
  return {
    now: () => at,
    seconds: () => Math.floor(at / 1000),
    advance(seconds) {
      at += seconds * 1000;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Error descriptions seen by this file (RFC 6749 5.2)

const descriptions: string[] = [];

/** Every error_description the server returned through these helpers in this test file. */
export function errorDescriptionsSeen(): readonly string[] {
  return descriptions;
}

/** %x20-21 / %x23-5B / %x5D-7E. */
export const RFC6749_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/;

/** Records the error_description of a response, wherever the server put it. */
export function observe(res: Response): Response {
  const body = res.body as { error_description?: unknown } | undefined;
  if (body && typeof body === 'object' && typeof body.error_description === 'string') descriptions.push(body.error_description);
  const location = res.headers.location as string | undefined;
  if (location) {
    const described = new URL(location, 'http://relative.invalid').searchParams.get('error_description');
    if (described !== null) descriptions.push(described);
  }
  const challenge = res.headers['www-authenticate'] as string | undefined;
  const match = challenge && /error_description="([^"]*)"/.exec(challenge);
  if (match) descriptions.push(match[1]!);
  return res;
}

// ---------------------------------------------------------------------------------------------
// Hosts

export interface Session {
  user?: 'alice' | 'bob';
  /** Seconds since the epoch: what the host reports as the user's sign-in time. */
  authTime?: number;
}

export interface HostSetup {
  oauth?: Partial<OAuthOptions>;
  clock?: TestClock;
  /** Other platform options (clientIp, ...). */
  platform?: Omit<CourierPlatformOptions, 'oauth' | 'now'>;
  /** Configure the clients with their plain secrets, exactly as oauthTestOptions() gives them (slow: scrypt at start-up). */
  plainSecrets?: boolean;
}

export interface Client {
  id: string;
  secret?: string;
  redirectUri: string;
}

export type TokenAuth = { basic: Client } | { basicRaw: string } | 'none';

export interface TokenResponseBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

const running = new Set<{ close(): Promise<void> }>();

/** For `afterEach`: closes every host the test started. */
export async function closeHosts(): Promise<void> {
  const all = [...running];
  running.clear();
  await Promise.all(all.map((server) => server.close()));
}

function sessionHeaders(session: Session | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (session?.user) headers['x-test-user'] = session.user;
  if (session?.authTime !== undefined) headers['x-test-auth-time'] = String(session.authTime);
  return headers;
}

/** openid-client's (oauth4webapi) RFC 6749 2.3.1 form encoding of a Basic user or password. */
export function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/(?:[-_.!~*'()]|%20)/g, (c) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${formEncode(id)}:${formEncode(secret)}`).toString('base64')}`;
}

/** A PKCE pair (RFC 7636 4.1, 4.2). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** OIDC Core 3.1.3.6: the left half of SHA-256 of the access token, base64url. */
export function atHashOf(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, 16).toString('base64url');
}

export type AuthorizeParams = Record<string, string | undefined>;

/** The query of an authorization request for the confidential client, with overrides (undefined removes a parameter). */
export function authorizeQuery(overrides: AuthorizeParams = {}): string {
  const params: AuthorizeParams = {
    response_type: 'code',
    client_id: CONFIDENTIAL.id,
    redirect_uri: CONFIDENTIAL.redirectUri,
    scope: 'openid profile email',
    state: `st-${randomBytes(6).toString('hex')}`,
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.append(key, value);
  return query.toString();
}

/** The redirect as a URL: a 302 answering a GET, a 303 answering a POST (RFC 9700 4.12); fails the test otherwise. */
export function redirectOf(res: Response): URL {
  const expected = res.request?.method === 'POST' ? 303 : 302;
  expect(res.status, `expected a redirect, got ${res.status}: ${res.text?.slice(0, 200)}`).toBe(expected);
  return new URL(res.headers.location as string, 'http://relative.invalid');
}

/** The callback's query, after checking the redirect goes to `redirectUri` (no extra path or host). */
export function callbackOf(res: Response, redirectUri: string = CONFIDENTIAL.redirectUri): URLSearchParams {
  const url = redirectOf(res);
  expect(`${url.origin}${url.pathname}`).toBe(redirectUri);
  return url.searchParams;
}

/** The hidden CSRF-bound transaction of a consent page. */
export function transactionOf(res: Response): string {
  expect(res.status).toBe(200);
  const match = /<input type="hidden" name="transaction" value="([^"]*)">/.exec(res.text);
  expect(match, 'the consent page has a transaction field').not.toBeNull();
  return match![1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

export function expectErrorPage(res: Response, status = 400): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.headers.location).toBeUndefined();
}

function authHeaders(auth: TokenAuth): Record<string, string> {
  if (auth === 'none') return {};
  return { authorization: 'basicRaw' in auth ? auth.basicRaw : basic(auth.basic.id, auth.basic.secret ?? '') };
}

export class TestHost {
  readonly issuer: string;

  constructor(
    readonly adapter: AdapterName,
    readonly origin: string,
    readonly clock: TestClock,
    readonly platform: Platform,
  ) {
    this.issuer = `${origin}/oauth`;
  }

  /** GET a path (or an absolute URL of this host). */
  async get(path: string, session?: Session, headers: Record<string, string> = {}): Promise<Response> {
    return observe(await request(this.origin).get(this.pathOf(path)).set({ ...sessionHeaders(session), ...headers }));
  }

  async postForm(path: string, form: Record<string, string> | string, headers: Record<string, string> = {}, session?: Session): Promise<Response> {
    const body = typeof form === 'string' ? form : new URLSearchParams(form).toString();
    return observe(
      await request(this.origin)
        .post(this.pathOf(path))
        .set({ 'content-type': 'application/x-www-form-urlencoded', ...sessionHeaders(session), ...headers })
        .send(body),
    );
  }

  /** For requests the helpers do not shape (odd media types, ...): remember to `observe()` the answer. */
  http(): ReturnType<typeof request> {
    return request(this.origin);
  }

  authorize(overrides: AuthorizeParams = {}, session?: Session): Promise<Response> {
    return this.get(`/oauth/authorize?${authorizeQuery(overrides)}`, session);
  }

  /** Submits the consent page's form the way the browser would. */
  decide(consentPage: Response, decision: 'approve' | 'deny', session: Session = { user: 'alice' }): Promise<Response> {
    return this.postForm('/oauth/consent', { transaction: transactionOf(consentPage), decision }, {}, session);
  }

  /**
   * Runs the front channel to a code: the authorization request, then Approve on the consent page
   * when one is shown. Answers the callback's parameters.
   */
  async code(overrides: AuthorizeParams = {}, session: Session = { user: 'alice' }): Promise<URLSearchParams> {
    let res = await this.authorize(overrides, session);
    if (res.status === 200) res = await this.decide(res, 'approve', session);
    const callback = callbackOf(res, overrides.redirect_uri ?? CONFIDENTIAL.redirectUri);
    expect(callback.get('error'), callback.get('error_description') ?? '').toBeNull();
    expect(callback.get('code')).toBeTruthy();
    return callback;
  }

  async token(form: Record<string, string>, auth: TokenAuth = { basic: CONFIDENTIAL }): Promise<Response> {
    return this.postForm('/oauth/token', form, authHeaders(auth));
  }

  /** The code exchange (RFC 6749 4.1.3) by the confidential client unless told otherwise. */
  exchange(code: string, options: { client?: Client; redirectUri?: string | null; verifier?: string; auth?: TokenAuth } = {}): Promise<Response> {
    const client = options.client ?? CONFIDENTIAL;
    const form: Record<string, string> = { grant_type: 'authorization_code', code };
    const redirectUri = options.redirectUri === undefined ? client.redirectUri : options.redirectUri;
    if (redirectUri !== null) form.redirect_uri = redirectUri;
    if (options.verifier !== undefined) form.code_verifier = options.verifier;
    // Without client authentication the client names itself in the body (RFC 6749 4.1.3).
    if (options.auth === 'none') form.client_id = client.id;
    return this.token(form, options.auth ?? { basic: client });
  }

  refresh(refreshToken: string, extra: Record<string, string> = {}, client: Client = CONFIDENTIAL): Promise<Response> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, { basic: client });
  }

  /** The whole flow for the confidential client: code, then tokens (asserted 200). */
  async tokens(overrides: AuthorizeParams = {}, session: Session = { user: 'alice' }): Promise<TokenResponseBody> {
    const callback = await this.code(overrides, session);
    const res = await this.exchange(callback.get('code')!);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as TokenResponseBody;
  }

  /** RFC 7009 2.1, by the confidential client unless told otherwise. */
  revoke(form: Record<string, string>, auth: TokenAuth = { basic: CONFIDENTIAL }): Promise<Response> {
    return this.postForm('/oauth/revoke', form, authHeaders(auth));
  }

  /** RFC 7662 2.1, by the confidential client unless told otherwise. */
  introspect(form: Record<string, string>, auth: TokenAuth = { basic: CONFIDENTIAL }): Promise<Response> {
    return this.postForm('/oauth/introspect', form, authHeaders(auth));
  }

  userinfo(accessToken: string, method: 'GET' | 'POST' = 'GET'): Promise<Response> {
    const authorization = { authorization: `Bearer ${accessToken}` };
    return method === 'GET' ? this.get('/oauth/userinfo', undefined, authorization) : this.postForm('/oauth/userinfo', '', authorization);
  }

  private pathOf(pathOrUrl: string): string {
    if (!/^https?:/.test(pathOrUrl)) return pathOrUrl;
    const url = new URL(pathOrUrl);
    expect(url.origin, 'a URL of this host').toBe(this.origin);
    return `${url.pathname}${url.search}`;
  }
}

/** A listening host on the given adapter with the harness's clients; closed by `closeHosts()`. */
export async function startHost(adapter: AdapterName, setup: HostSetup = {}): Promise<TestHost> {
  const clock = setup.clock ?? testClock();
  const base = oauthTestOptions();
  const oauth: OAuthOptions = {
    ...base,
    ...(setup.plainSecrets ? {} : { clients: await cheapClients() }),
    signingKeys: [await sharedSigningKey()],
    ...setup.oauth,
  };
  const host = oauthHost(adapter, oauth, { ...setup.platform, now: clock.now });
  await host.ready();
  const server = await listen(host.listener);
  running.add(server);
  return new TestHost(adapter, server.url, clock, host.platform);
}
