/**
 * The authorization endpoint (RFC 6749 3.1 / 4.1.1 / 4.1.2, OIDC Core 3.1.2, RFC 9207, RFC 7636),
 * through HTTP on every adapter: which mistakes show an error page and which go back to the
 * client, the exact echo of state, and the login round trip for prompt / max_age.
 *
 * Whole though past 350 lines: this folder keeps one file per endpoint, and the last test checks
 * every error_description the requests above received (more than 10 of them); split, that check
 * would run in each part over a fraction of the answers.
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ADAPTER_NAMES,
  authorizeQuery,
  callbackOf,
  closeHosts,
  CONFIDENTIAL,
  errorDescriptionsSeen,
  expectErrorPage,
  OTHER,
  pkcePair,
  PUBLIC,
  redirectOf,
  RFC6749_DESCRIPTION,
  startHost,
  testClock,
  type Session,
  type TestHost,
} from './helpers.js';

afterEach(closeHosts);

const ALICE: Session = { user: 'alice' };
/** Every character class that needs URL encoding in a query, and VSCHAR all the same (RFC 6749 A.5). */
const AWKWARD_STATE = 'a b+c/%?&=~';

/** The host's login page address of a login redirect, and the return_to it was given. */
function loginRedirectOf(res: Parameters<typeof redirectOf>[0], host: TestHost): URL {
  const location = redirectOf(res);
  expect(location.pathname).toBe('/login');
  const returnTo = location.searchParams.get('return_to');
  expect(returnTo, 'the login redirect carries return_to').toBeTruthy();
  const back = new URL(returnTo!);
  expect(`${back.origin}${back.pathname}`).toBe(`${host.issuer}/authorize`);
  return back;
}

/**
 * A login redirect as the browser sees it: the return_to, and the cookie that binds its marker to
 * this browser (sent back as a browser would, to the authorize path only).
 */
function loginReturnOf(res: Parameters<typeof redirectOf>[0], host: TestHost): { back: URL; browser: Record<string, string> } {
  const back = loginRedirectOf(res, host);
  const setCookie = ([] as string[]).concat((res.headers['set-cookie'] as string[] | string | undefined) ?? []);
  const cookie = setCookie.find((c) => c.startsWith('cp_login='));
  expect(cookie, 'the login redirect sets the browser cookie').toBeDefined();
  return { back, browser: { cookie: cookie!.split(';')[0]! } };
}

async function discoveryIssuer(host: TestHost): Promise<string> {
  const res = await host.get('/oauth/.well-known/openid-configuration');
  return (res.body as { issuer: string }).issuer;
}

describe.each(ADAPTER_NAMES)('authorization endpoint on %s', (adapter) => {
  describe('a client or redirect_uri that cannot be trusted gets an error page, never a redirect', () => {
    it('RFC 6749 4.1.2.1: unknown client shows an error page and never redirects', async () => {
      const host = await startHost(adapter);
      expectErrorPage(await host.authorize({ client_id: 'no-such-client' }, ALICE));
      expectErrorPage(await host.authorize({ client_id: 'no-such-client' }));
    });

    it('RFC 6749 4.1.2.1: missing client_id shows an error page', async () => {
      const host = await startHost(adapter);
      expectErrorPage(await host.authorize({ client_id: undefined }, ALICE));
    });

    it('RFC 6749 3.1.2.3: an unregistered redirect_uri (exact string match) shows an error page and never redirects', async () => {
      const host = await startHost(adapter);
      const near = [
        'http://127.0.0.1:9/evil',
        `${CONFIDENTIAL.redirectUri}/`,
        `${CONFIDENTIAL.redirectUri}?x=1`,
        CONFIDENTIAL.redirectUri.toUpperCase(),
        CONFIDENTIAL.redirectUri.slice(0, -1),
        OTHER.redirectUri, // registered, but for another client
      ];
      for (const redirectUri of near) {
        const res = await host.authorize({ redirect_uri: redirectUri }, ALICE);
        expectErrorPage(res);
        expect(res.text).not.toContain('name="transaction"');
      }
    });

    it('OIDC Core 3.1.2.1: a missing redirect_uri shows an error page instead of falling back to the registered one', async () => {
      const host = await startHost(adapter);
      expectErrorPage(await host.authorize({ redirect_uri: undefined }, ALICE));
      expectErrorPage(await host.authorize({ redirect_uri: '' }, ALICE));
    });

    it('RFC 6749 3.1: a repeated parameter shows an error page', async () => {
      const host = await startHost(adapter);
      for (const extra of ['state=second', `redirect_uri=${encodeURIComponent(OTHER.redirectUri)}`, 'scope=openid', `client_id=${OTHER.id}`]) {
        const res = await host.get(`/oauth/authorize?${authorizeQuery()}&${extra}`, ALICE);
        expectErrorPage(res);
      }
    });
  });

  describe('other errors go back to the client with error, state and iss', () => {
    it('RFC 6749 4.1.2.1: unsupported response_type (token) redirects with unsupported_response_type, state and iss', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ response_type: 'token', state: 'st-implicit' }, ALICE));
      expect(callback.get('error')).toBe('unsupported_response_type');
      expect(callback.get('state')).toBe('st-implicit');
      expect(callback.get('iss')).toBe(host.issuer);
      expect(callback.get('code')).toBeNull();
      expect(callback.get('access_token')).toBeNull();
    });

    it('OIDC Core 6.1 / 6.2: request and request_uri are refused with request_not_supported / request_uri_not_supported, state and iss, never a code', async () => {
      const host = await startHost(adapter);
      // A user who approved before: without the refusal, the answer would be a code.
      await host.code({}, ALICE);
      const requestObject = 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCBlbWFpbCJ9.';
      for (const [param, value, error] of [
        ['request', requestObject, 'request_not_supported'],
        ['request_uri', 'https://rp.example/request.jwt', 'request_uri_not_supported'],
      ] as const) {
        for (const res of [await host.authorize({ [param]: value, state: `st-${param}` }, ALICE), await host.postForm('/oauth/authorize', authorizeQuery({ [param]: value, state: `st-${param}` }), {}, ALICE)]) {
          const callback = callbackOf(res);
          expect(callback.get('error')).toBe(error);
          expect(callback.get('state')).toBe(`st-${param}`);
          expect(callback.get('iss')).toBe(host.issuer);
          expect(callback.get('code')).toBeNull();
        }
      }
      // Before the client and its redirect_uri are trusted, the error page as ever (RFC 6749 4.1.2.1).
      expectErrorPage(await host.authorize({ request: requestObject, redirect_uri: 'https://evil.example/cb' }, ALICE));
    });

    it('OIDC Core 3.1.2.1 response_mode: a mode other than query (form_post, fragment) is refused with invalid_request, never answered with a code in the query', async () => {
      const host = await startHost(adapter);
      // A user who approved before: without the refusal, the answer would be a code in the URL.
      await host.code({}, ALICE);
      for (const mode of ['form_post', 'fragment', 'query.jwt']) {
        const callback = callbackOf(await host.authorize({ response_mode: mode, state: 'st-mode' }, ALICE));
        expect(callback.get('error')).toBe('invalid_request');
        expect(callback.get('state')).toBe('st-mode');
        expect(callback.get('code')).toBeNull();
      }
      expect(callbackOf(await host.authorize({ response_mode: 'query' }, ALICE)).get('code')).toBeTruthy();
    });

    it('RFC 6749 4.1.2.1: a missing response_type redirects with invalid_request', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ response_type: undefined, state: 's1' }, ALICE));
      expect(callback.get('error')).toBe('invalid_request');
      expect(callback.get('state')).toBe('s1');
      expect(callback.get('iss')).toBe(host.issuer);
    });

    it('RFC 6749 4.1.1, with state required (docs/oauth.md): a missing state redirects with invalid_request and iss', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ state: undefined }, ALICE));
      expect(callback.get('error')).toBe('invalid_request');
      expect(callback.get('state')).toBeNull();
      expect(callback.get('iss')).toBe(host.issuer);
      expect(callback.get('code')).toBeNull();
    });

    it('RFC 6749 4.1.2.1: a scope the client may not ask for redirects with invalid_scope', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ scope: 'openid admin' }, ALICE));
      expect(callback.get('error')).toBe('invalid_scope');
      expect(callback.get('iss')).toBe(host.issuer);
    });

    it('RFC 6749 4.1.1 / RFC 9207 2: state is echoed byte-exact on an error, with iss equal to the discovery issuer', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ response_type: 'token', state: AWKWARD_STATE }, ALICE));
      expect(callback.get('state')).toBe(AWKWARD_STATE);
      expect(callback.get('iss')).toBe(await discoveryIssuer(host));
    });

    it('RFC 6749 4.1.2.1 / 5.2: error_description in a redirect keeps to the allowed characters, even when it echoes the request', async () => {
      const host = await startHost(adapter);
      for (const overrides of [{ scope: 'openid "quoted"\\slash' }, { prompt: 'none"\\' }, { max_age: '"1"' }]) {
        const callback = callbackOf(await host.authorize(overrides, ALICE));
        expect(callback.get('error')).toMatch(/^invalid_/);
        expect.soft(callback.get('error_description') ?? '', JSON.stringify(overrides)).toMatch(RFC6749_DESCRIPTION);
      }
    });
  });

  describe('success', () => {
    it('RFC 6749 4.1.2 / RFC 9207 2: the code goes to the exact redirect_uri with the byte-exact state and iss equal to the discovery issuer', async () => {
      const host = await startHost(adapter);
      const consent = await host.authorize({ state: AWKWARD_STATE }, ALICE);
      const callback = callbackOf(await host.decide(consent, 'approve'));
      expect(callback.get('code')).toMatch(/^[\x21-\x7E]{20,}$/);
      expect(callback.get('state')).toBe(AWKWARD_STATE);
      expect(callback.get('iss')).toBe(await discoveryIssuer(host));
      expect(callback.get('iss')).toBe(`${host.origin}/oauth`);
      expect(callback.get('error')).toBeNull();
    });

    it('OIDC Core 3.1.2.1: the authorization request may be POSTed as a form, with the same answers', async () => {
      const host = await startHost(adapter);
      const consent = await host.postForm('/oauth/authorize', authorizeQuery({ state: AWKWARD_STATE }), {}, ALICE);
      expect(consent.status).toBe(200);
      const callback = callbackOf(await host.decide(consent, 'approve'));
      expect(callback.get('state')).toBe(AWKWARD_STATE);
      expect(callback.get('iss')).toBe(host.issuer);
      expectErrorPage(await host.postForm('/oauth/authorize', authorizeQuery({ client_id: 'no-such-client' }), {}, ALICE));
      expectErrorPage(await host.postForm('/oauth/authorize', `${authorizeQuery()}&state=second`, {}, ALICE));
    });

    it('RFC 6749 4.1.2: a remembered consent answers the same way, without a page', async () => {
      const host = await startHost(adapter);
      await host.code({}, ALICE);
      const res = await host.authorize({ state: AWKWARD_STATE }, ALICE);
      const callback = callbackOf(res);
      expect(callback.get('code')).toBeTruthy();
      expect(callback.get('state')).toBe(AWKWARD_STATE);
      expect(callback.get('iss')).toBe(host.issuer);
    });
  });

  describe('prompt=none (OIDC Core 3.1.2.1, 3.1.2.6)', () => {
    it('OIDC Core 3.1.2.6: prompt=none without a session redirects with login_required, never to the login page', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ prompt: 'none', state: AWKWARD_STATE }));
      expect(callback.get('error')).toBe('login_required');
      expect(callback.get('state')).toBe(AWKWARD_STATE);
      expect(callback.get('iss')).toBe(host.issuer);
    });

    it('OIDC Core 3.1.2.6: prompt=none with a session but no remembered consent redirects with consent_required', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ prompt: 'none', state: 'pn' }, ALICE));
      expect(callback.get('error')).toBe('consent_required');
      expect(callback.get('state')).toBe('pn');
      expect(callback.get('iss')).toBe(host.issuer);
    });

    it('OIDC Core 3.1.2.1: prompt=none after consent was given once issues a code without any page', async () => {
      const host = await startHost(adapter);
      await host.code({}, ALICE);
      const res = await host.authorize({ prompt: 'none', state: 'silent' }, ALICE);
      const callback = callbackOf(res);
      expect(callback.get('code')).toBeTruthy();
      expect(callback.get('state')).toBe('silent');
      const tokens = await host.exchange(callback.get('code')!);
      expect(tokens.status).toBe(200);
    });

    it('OIDC Core 3.1.2.1: prompt=none combined with another value is invalid_request', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ prompt: 'none login' }, ALICE));
      expect(callback.get('error')).toBe('invalid_request');
    });
  });

  describe('login round trip through the host (OIDC Core 3.1.2.3)', () => {
    it('OIDC Core 3.1.2.3: without a session the user goes to loginUrl with a return_to that resumes the same request', async () => {
      const host = await startHost(adapter);
      const { challenge, verifier } = pkcePair();
      const request = { state: AWKWARD_STATE, nonce: 'n-0S6_WzA2Mj', code_challenge: challenge, code_challenge_method: 'S256' };
      const back = loginRedirectOf(await host.authorize(request), host);
      for (const [key, value] of Object.entries({ ...request, client_id: CONFIDENTIAL.id, redirect_uri: CONFIDENTIAL.redirectUri, scope: 'openid profile email' })) {
        expect(back.searchParams.get(key), key).toBe(value);
      }

      const consent = await host.get(back.toString(), ALICE);
      expect(consent.status).toBe(200);
      expect(consent.text).toContain('Relying Party');
      const callback = callbackOf(await host.decide(consent, 'approve'));
      expect(callback.get('state')).toBe(AWKWARD_STATE);
      const tokens = await host.exchange(callback.get('code')!, { verifier });
      expect(tokens.status).toBe(200);
      expect(decodeJwt((tokens.body as { id_token: string }).id_token).nonce).toBe('n-0S6_WzA2Mj');
    });

    it('OIDC Core 3.1.2.3: an absolute loginUrl gets an absolute redirect with return_to', async () => {
      const host = await startHost(adapter, { oauth: { loginUrl: 'https://accounts.example/sign-in?lang=en' } });
      const location = new URL((await host.authorize({})).headers.location as string);
      expect(`${location.origin}${location.pathname}`).toBe('https://accounts.example/sign-in');
      expect(location.searchParams.get('lang')).toBe('en');
      expect(location.searchParams.get('return_to')).toMatch(new RegExp(`^${host.issuer}/authorize\\?`));
    });

    it('OIDC Core 3.1.2.1 prompt=login: a signed-in user is sent to log in first; a fresh login proceeds', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      const signedInLongAgo = { user: 'alice', authTime: clock.seconds() - 3600 } as const;
      const { back, browser } = loginReturnOf(await host.authorize({ prompt: 'login' }, signedInLongAgo), host);
      // The return keeps prompt=login: only its one-time marker lets it through.
      expect(back.searchParams.get('prompt')).toBe('login');

      clock.advance(20);
      const consent = await host.get(back.toString(), { user: 'alice', authTime: clock.seconds() - 5 }, browser);
      expect(consent.status).toBe(200);
      expect(consent.text).toContain('name="transaction"');
    });

    it('OIDC Core 3.1.2.1 prompt=login: coming back with an auth_time older than the login request gives login_required', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      const stale = { user: 'alice', authTime: clock.seconds() - 3600 } as const;
      const { back, browser } = loginReturnOf(await host.authorize({ prompt: 'login', state: 'pl' }, stale), host);

      clock.advance(20);
      const callback = callbackOf(await host.get(back.toString(), stale, browser));
      expect(callback.get('error')).toBe('login_required');
      expect(callback.get('state')).toBe('pl');
      expect(callback.get('iss')).toBe(host.issuer);
    });

    it('OIDC Core 3.1.2.1 prompt=login: the return_to of one client does not count as a login for another', async () => {
      const host = await startHost(adapter);
      const back = loginRedirectOf(await host.authorize({ prompt: 'login' }, ALICE), host);
      const forOther = new URLSearchParams(authorizeQuery({ client_id: OTHER.id, redirect_uri: OTHER.redirectUri, prompt: 'login' }));
      forOther.set('cp_login', back.searchParams.get('cp_login') ?? '');
      loginRedirectOf(await host.get(`/oauth/authorize?${forOther.toString()}`, ALICE), host);
    });

    it('OIDC Core 3.1.2.1 prompt=login: the login marker of one request (another user\'s, say) does not count for another request of the same client', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      // A host that reports no auth_time: the marker is all the platform has to go on.
      const bobsBack = loginRedirectOf(await host.authorize({ prompt: 'login', max_age: '0' }, { user: 'bob' }), host);
      const alicesRequest = new URLSearchParams(authorizeQuery({ prompt: 'login', max_age: '0' }));
      alicesRequest.set('cp_login', bobsBack.searchParams.get('cp_login') ?? '');
      loginRedirectOf(await host.get(`/oauth/authorize?${alicesRequest.toString()}`, ALICE), host);
    });

    it('OIDC Core 3.1.2.1 prompt=login: the return from the login page counts once; replayed, it asks for a login again', async () => {
      const host = await startHost(adapter);
      const { back, browser } = loginReturnOf(await host.authorize({ prompt: 'login' }, ALICE), host);
      expect((await host.get(back.toString(), ALICE, browser)).status).toBe(200);
      loginRedirectOf(await host.get(back.toString(), ALICE, browser), host);
    });

    it('OIDC Core 3.1.2.1 prompt=login: the marker works only in the browser it was issued to (its HttpOnly, SameSite=Lax cookie, scoped to the authorize path)', async () => {
      const host = await startHost(adapter);
      // A signed-out attacker fetches a return address; the host reports no auth_time, so the marker is all there is.
      const attacker = loginReturnOf(await host.authorize({ prompt: 'login' }), host);
      const cookie = ([] as string[]).concat(((await host.authorize({ prompt: 'login' })).headers['set-cookie'] as string[] | string) ?? [])[0]!;
      expect(cookie).toMatch(/^cp_login=[A-Za-z0-9_-]{22}; Path=\/oauth\/authorize; Max-Age=600; HttpOnly; SameSite=Lax$/);

      // The victim's browser, with an older session: without the attacker's cookie, or with its own, a login is asked for again.
      const victim = loginReturnOf(await host.authorize({ state: 'victim', prompt: 'login' }, ALICE), host);
      loginRedirectOf(await host.get(attacker.back.toString(), ALICE), host);
      loginRedirectOf(await host.get(attacker.back.toString(), ALICE, victim.browser), host);
      // The attacker's own browser still holds a marker that works, once.
      expect((await host.get(attacker.back.toString(), ALICE, attacker.browser)).status).toBe(200);
    });

    it('OIDC Core 3.1.2.1 prompt=login: a browser keeps one id across login requests, so two tabs signing in at once both come back', async () => {
      const host = await startHost(adapter);
      const first = loginReturnOf(await host.authorize({ prompt: 'login', state: 'tab-1' }, ALICE), host);
      const second = loginReturnOf(await host.get(`/oauth/authorize?${authorizeQuery({ prompt: 'login', state: 'tab-2' })}`, ALICE, first.browser), host);
      expect(second.browser).toEqual(first.browser);
      for (const tab of [first, second]) expect((await host.get(tab.back.toString(), ALICE, first.browser)).status).toBe(200);
    });

    it('OIDC Core 3.1.2.1 max_age: an auth_time older than max_age sends the user to log in; the id_token carries the new auth_time', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      const back = loginRedirectOf(await host.authorize({ max_age: '300' }, { user: 'alice', authTime: clock.seconds() - 301 }), host);

      clock.advance(30);
      const freshLogin = clock.seconds() - 2;
      const consent = await host.get(back.toString(), { user: 'alice', authTime: freshLogin });
      const callback = callbackOf(await host.decide(consent, 'approve', { user: 'alice', authTime: freshLogin }));
      const tokens = await host.exchange(callback.get('code')!);
      expect(decodeJwt((tokens.body as { id_token: string }).id_token).auth_time).toBe(freshLogin);
    });

    it('OIDC Core 3.1.2.1 max_age: a recent enough sign-in proceeds, and the id_token carries its auth_time', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      const session = { user: 'alice', authTime: clock.seconds() - 299 } as const;
      const consent = await host.authorize({ max_age: '300' }, session);
      expect(consent.status).toBe(200);
      const callback = callbackOf(await host.decide(consent, 'approve', session));
      const tokens = await host.exchange(callback.get('code')!);
      expect(decodeJwt((tokens.body as { id_token: string }).id_token).auth_time).toBe(session.authTime);
    });

    it('OIDC Core 3.1.2.1 max_age: with prompt=none a too old sign-in is login_required', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      await host.code({}, { user: 'alice', authTime: clock.seconds() });
      clock.advance(120);
      const callback = callbackOf(await host.authorize({ prompt: 'none', max_age: '60' }, { user: 'alice', authTime: clock.seconds() - 120 }));
      expect(callback.get('error')).toBe('login_required');
    });
  });

  describe('PKCE at the authorization endpoint (RFC 7636)', () => {
    it('RFC 7636 4.2 / 4.4.1: code_challenge_method=plain is refused with an invalid_request redirect', async () => {
      const host = await startHost(adapter);
      const { verifier } = pkcePair();
      const callback = callbackOf(await host.authorize({ code_challenge: verifier, code_challenge_method: 'plain', state: 'p1' }, ALICE));
      expect(callback.get('error')).toBe('invalid_request');
      expect(callback.get('state')).toBe('p1');
      expect(callback.get('iss')).toBe(host.issuer);
    });

    it('RFC 7636 4.3: a code_challenge without code_challenge_method means plain, and is refused', async () => {
      const host = await startHost(adapter);
      const { challenge } = pkcePair();
      const callback = callbackOf(await host.authorize({ code_challenge: challenge }, ALICE));
      expect(callback.get('error')).toBe('invalid_request');
      expect(callback.get('code')).toBeNull();
    });

    it('RFC 7636 1 / OAuth 2.0 Security BCP 2.1.1: a public client without PKCE is refused', async () => {
      const host = await startHost(adapter);
      const callback = callbackOf(await host.authorize({ client_id: PUBLIC.id, redirect_uri: PUBLIC.redirectUri, state: 'pub' }, ALICE), PUBLIC.redirectUri);
      expect(callback.get('error')).toBe('invalid_request');
      expect(callback.get('state')).toBe('pub');
    });
  });
});

describe('RFC 6749 5.2 (error_description)', () => {
  it('RFC 6749 5.2: every error_description returned in this file uses only %x20-21 / %x23-5B / %x5D-7E', () => {
    const seen = errorDescriptionsSeen();
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((d) => !RFC6749_DESCRIPTION.test(d))).toEqual([]);
  });
});
