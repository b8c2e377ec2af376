/**
 * The token endpoint (RFC 6749 2.3, 3.2, 4.1.3, 5, 6, 10.5; RFC 7636 4.5-4.6; OAuth 2.0 Security
 * BCP 4.14) through HTTP on every adapter: client authentication, code exchange, PKCE, refresh
 * rotation and reuse detection, and the shape of every answer.
 *
 * Whole though past 350 lines: this folder keeps one file per endpoint, and the last test checks
 * every error_description the requests above received (more than 20 of them); split, that check
 * would run in each part over a fraction of the answers.
 */
import type { Response } from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { header } from '../../../src/core/http.js';
import { capturingLogger } from '../../support/logger.js';
import {
  ADAPTER_NAMES,
  basic,
  closeHosts,
  CONFIDENTIAL,
  ENCODED,
  errorDescriptionsSeen,
  formEncode,
  observe,
  OTHER,
  pkcePair,
  PUBLIC,
  RFC6749_DESCRIPTION,
  startHost,
  testClock,
  type AdapterName,
  type TestHost,
} from './helpers.js';

afterEach(closeHosts);

function expectTokenHeaders(res: Response): void {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}

/** RFC 6749 5.2: a JSON error with that code, never cached. */
function expectTokenError(res: Response, status: number, error: string): void {
  expect({ status: res.status, error: (res.body as { error?: string }).error }, JSON.stringify(res.body)).toEqual({ status, error });
  expect(typeof res.body.error_description).toBe('string');
  expectTokenHeaders(res);
}

function expectInvalidClient(res: Response): void {
  expectTokenError(res, 401, 'invalid_client');
  expect(res.headers['www-authenticate']).toMatch(/^Basic\b/);
}

/** A code for the public client, with PKCE S256. */
async function publicCode(host: TestHost): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const callback = await host.code({ client_id: PUBLIC.id, redirect_uri: PUBLIC.redirectUri, code_challenge: challenge, code_challenge_method: 'S256' });
  return { code: callback.get('code')!, verifier };
}

describe.each(ADAPTER_NAMES)('token endpoint on %s', (adapter) => {
  describe('the code exchange (RFC 6749 4.1.3)', () => {
    it('RFC 6749 5.1: the exchange answers Bearer tokens with Cache-Control: no-store and Pragma: no-cache', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({ scope: 'openid profile email' })).get('code')!;
      const res = await host.exchange(code);
      expect(res.status).toBe(200);
      expectTokenHeaders(res);
      expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'openid profile email' });
      expect(res.body.expires_in).toBeGreaterThanOrEqual(3599);
      expect(res.body.expires_in).toBeLessThanOrEqual(3600);
      expect(res.body.access_token).toEqual(expect.any(String));
      expect(res.body.id_token).toEqual(expect.any(String));
      expect(res.body.refresh_token).toBeUndefined();
      expect((await host.userinfo(res.body.access_token)).status).toBe(200);
    });

    it('RFC 6749 4.1.2 / 10.5: a second exchange of a code fails with invalid_grant and revokes the tokens of the first', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({ scope: 'openid profile offline_access' })).get('code')!;
      const first = await host.exchange(code);
      expect(first.status).toBe(200);

      expectTokenError(await host.exchange(code), 400, 'invalid_grant');
      const userinfo = await host.userinfo(first.body.access_token);
      expect(userinfo.status).toBe(401);
      expect(userinfo.body.error).toBe('invalid_token');
      expectTokenError(await host.refresh(first.body.refresh_token), 400, 'invalid_grant');
    });

    it('RFC 6749 4.1.2 / 10.5: a code replayed after its lifetime (platform clock) still revokes the tokens of the first exchange', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({ scope: 'openid profile offline_access' })).get('code')!;
      const first = await host.exchange(code);
      expect(first.status).toBe(200);
      host.clock.advance(10 * 60);

      expectTokenError(await host.exchange(code), 400, 'invalid_grant');
      expect((await host.userinfo(first.body.access_token)).status).toBe(401);
      expectTokenError(await host.refresh(first.body.refresh_token), 400, 'invalid_grant');
    });

    it('RFC 6749 4.1.3: a code issued to another client fails with invalid_grant, even with that client’s valid credentials', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      expectTokenError(await host.exchange(code, { client: OTHER, redirectUri: CONFIDENTIAL.redirectUri }), 400, 'invalid_grant');
      expectTokenError(await host.exchange(code, { client: OTHER }), 400, 'invalid_grant');
    });

    it('RFC 6749 4.1.2: an expired code (platform clock past lifetimes.code) fails with invalid_grant', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock, oauth: { lifetimes: { code: 30 } } });
      const stillValid = (await host.code({})).get('code')!;
      const expired = (await host.code({})).get('code')!;
      clock.advance(29);
      expect((await host.exchange(stillValid)).status).toBe(200);
      clock.advance(2);
      expectTokenError(await host.exchange(expired), 400, 'invalid_grant');
    });

    it('RFC 6749 4.1.3: a redirect_uri that differs from the authorization request fails with invalid_grant', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      expectTokenError(await host.exchange(code, { redirectUri: `${CONFIDENTIAL.redirectUri}/` }), 400, 'invalid_grant');
    });

    it('RFC 6749 4.1.3: a missing redirect_uri fails with invalid_request', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      expectTokenError(await host.exchange(code, { redirectUri: null }), 400, 'invalid_request');
    });

    it('RFC 6749 4.1.3: a missing code fails with invalid_request; an unknown one with invalid_grant', async () => {
      const host = await startHost(adapter);
      expectTokenError(await host.token({ grant_type: 'authorization_code', redirect_uri: CONFIDENTIAL.redirectUri }), 400, 'invalid_request');
      expectTokenError(await host.exchange('AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB'), 400, 'invalid_grant');
      expectTokenError(await host.exchange('not-a-code'), 400, 'invalid_grant');
    });
  });

  describe('client authentication (RFC 6749 2.3, 3.2.1, 5.2)', () => {
    it('RFC 6749 5.2: a wrong client secret answers 401 invalid_client with WWW-Authenticate: Basic', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      expectInvalidClient(await host.exchange(code, { auth: { basic: { ...CONFIDENTIAL, secret: 'wrong-secret-1234' } } }));
      expect((await host.exchange(code)).status).toBe(200);
    });

    it('RFC 6749 5.2: an unknown client id gets exactly the same answer as a wrong secret (no client-existence oracle)', async () => {
      const host = await startHost(adapter);
      const form = { grant_type: 'authorization_code', code: 'AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', redirect_uri: CONFIDENTIAL.redirectUri };
      const wrongSecret = await host.token(form, { basic: { ...CONFIDENTIAL, secret: 'wrong-secret-1234' } });
      const unknownClient = await host.token(form, { basic: { id: 'no-such-client', secret: 'wrong-secret-1234', redirectUri: CONFIDENTIAL.redirectUri } });
      expectInvalidClient(wrongSecret);
      expect(unknownClient.status).toBe(wrongSecret.status);
      expect(unknownClient.body).toEqual(wrongSecret.body);
      expect(unknownClient.headers['www-authenticate']).toBe(wrongSecret.headers['www-authenticate']);
    });

    it('RFC 6749 2.3.1: Basic credentials are form-encoded before base64 (as openid-client sends them) and authenticate', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({ client_id: ENCODED.id, redirect_uri: ENCODED.redirectUri })).get('code')!;
      const res = await host.exchange(code, { client: ENCODED });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.access_token).toEqual(expect.any(String));
    });

    it('RFC 6749 2.3.1: the raw, unencoded secret of that client does not authenticate', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({ client_id: ENCODED.id, redirect_uri: ENCODED.redirectUri })).get('code')!;
      const raw = `Basic ${Buffer.from(`${formEncode(ENCODED.id)}:${ENCODED.secret}`).toString('base64')}`;
      expectInvalidClient(await host.exchange(code, { client: ENCODED, auth: { basicRaw: raw } }));
      expect((await host.exchange(code, { client: ENCODED })).status).toBe(200);
    });

    it('RFC 7617 2.1: Basic credentials whose bytes are not UTF-8 are invalid_client, and the code still works', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      const raw = `Basic ${Buffer.concat([Buffer.from(`${CONFIDENTIAL.id}:`), Buffer.from([0xff, 0xfe, 0x41])]).toString('base64')}`;
      expectInvalidClient(await host.exchange(code, { auth: { basicRaw: raw } }));
      expect((await host.exchange(code)).status).toBe(200);
    });

    it('RFC 6749 2.3: Basic and body credentials together fail with invalid_request', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      const form = { grant_type: 'authorization_code', code, redirect_uri: CONFIDENTIAL.redirectUri, client_id: CONFIDENTIAL.id, client_secret: CONFIDENTIAL.secret };
      expectTokenError(await host.token(form), 400, 'invalid_request');
    });

    it('RFC 6749 2.3.1: client_secret in the body only (client_secret_post, not offered) fails with invalid_client', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      const form = { grant_type: 'authorization_code', code, redirect_uri: CONFIDENTIAL.redirectUri, client_id: CONFIDENTIAL.id, client_secret: CONFIDENTIAL.secret };
      expectInvalidClient(await host.token(form, 'none'));
    });

    it('RFC 6749 3.2.1: a confidential client that sends only its client_id fails with invalid_client', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      expectInvalidClient(await host.token({ grant_type: 'authorization_code', code, redirect_uri: CONFIDENTIAL.redirectUri, client_id: CONFIDENTIAL.id }, 'none'));
      expectInvalidClient(await host.token({ grant_type: 'authorization_code', code, redirect_uri: CONFIDENTIAL.redirectUri }, 'none'));
    });
  });

  describe('request shape (RFC 6749 3.2, 4.1.3, 5.2)', () => {
    it('RFC 6749 5.2: an unsupported grant_type (password) fails with unsupported_grant_type', async () => {
      const host = await startHost(adapter);
      expectTokenError(await host.token({ grant_type: 'password', username: 'alice', password: 'x' }), 400, 'unsupported_grant_type');
    });

    it('RFC 6749 4.1.3: a missing grant_type fails with invalid_request', async () => {
      const host = await startHost(adapter);
      expectTokenError(await host.token({ code: 'x', redirect_uri: CONFIDENTIAL.redirectUri }), 400, 'invalid_request');
    });

    it('RFC 6749 3.2: a body that is not application/x-www-form-urlencoded gets an RFC 6749 JSON error, never HTML', async () => {
      const host = await startHost(adapter);
      const authorization = basic(CONFIDENTIAL.id, CONFIDENTIAL.secret);
      const bodies: [string, string][] = [
        ['application/json', JSON.stringify({ grant_type: 'authorization_code', code: 'x' })],
        ['text/plain', 'grant_type=authorization_code&code=x'],
        ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nauthorization_code\r\n--x--'],
      ];
      for (const [type, body] of bodies) {
        const res = observe(await host.http().post('/oauth/token').set({ authorization, 'content-type': type }).send(body));
        expect(res.status, type).toBeGreaterThanOrEqual(400);
        expect(res.status, type).toBeLessThan(500);
        expect(res.headers['content-type'], type).toMatch(/^application\/json/);
        expect(res.text).not.toMatch(/<html/i);
        expect(res.body.error, type).toMatch(/^invalid_request$|^invalid_client$/);
        expect(res.headers['cache-control']).toBe('no-store');
      }
    });

    it('RFC 6749 3.2: a parameter sent twice fails with invalid_request', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CONFIDENTIAL.redirectUri }).toString();
      const res = await host.postForm('/oauth/token', `${body}&code=${code}`, { authorization: basic(CONFIDENTIAL.id, CONFIDENTIAL.secret) });
      expectTokenError(res, 400, 'invalid_request');
      // Whatever its name: __proto__ is an ordinary key here, sent twice like any other.
      const proto = await host.postForm('/oauth/token', `${body}&__proto__=a&__proto__=b`, { authorization: basic(CONFIDENTIAL.id, CONFIDENTIAL.secret) });
      expectTokenError(proto, 400, 'invalid_request');
      expect(proto.body.error_description).toMatch(/__proto__/);
    });

    it('RFC 6749 5.1 / 5.2: every answer of the token endpoint, success or error, carries no-store and no-cache', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({ scope: 'openid offline_access' })).get('code')!;
      const answers = [
        await host.exchange(code),
        await host.exchange(code),
        await host.token({ grant_type: 'password' }),
        await host.token({ grant_type: 'authorization_code', code }, { basic: { ...CONFIDENTIAL, secret: 'nope-nope-nope' } }),
      ];
      for (const res of answers) expectTokenHeaders(res);
    });
  });

  describe('PKCE at the token endpoint (RFC 7636 4.5, 4.6)', () => {
    it('RFC 7636 4.6: a public client (no secret, client_id in the body) completes the flow with S256', async () => {
      const host = await startHost(adapter);
      const { code, verifier } = await publicCode(host);
      const res = await host.exchange(code, { client: PUBLIC, verifier, auth: 'none' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.token_type).toBe('Bearer');
      expect((await host.userinfo(res.body.access_token)).body.sub).toBe('user-alice');
    });

    it('RFC 7636 4.6: a wrong code_verifier fails with invalid_grant', async () => {
      const host = await startHost(adapter);
      const { code } = await publicCode(host);
      expectTokenError(await host.exchange(code, { client: PUBLIC, verifier: pkcePair().verifier, auth: 'none' }), 400, 'invalid_grant');
    });

    it('RFC 7636 4.5: a missing code_verifier when a challenge was sent fails with invalid_grant', async () => {
      const host = await startHost(adapter);
      const { code } = await publicCode(host);
      expectTokenError(await host.exchange(code, { client: PUBLIC, auth: 'none' }), 400, 'invalid_grant');

      const { challenge } = pkcePair();
      const confidential = (await host.code({ code_challenge: challenge, code_challenge_method: 'S256' })).get('code')!;
      expectTokenError(await host.exchange(confidential), 400, 'invalid_grant');
    });

    it('RFC 7636 4.6 / OAuth 2.0 Security BCP 4.8.2: a code_verifier sent for a code issued without a challenge fails with invalid_grant', async () => {
      const host = await startHost(adapter);
      const code = (await host.code({})).get('code')!;
      expectTokenError(await host.exchange(code, { verifier: pkcePair().verifier }), 400, 'invalid_grant');
    });

    it('RFC 7636 4.6: a confidential client with PKCE needs both its secret and the right verifier', async () => {
      const host = await startHost(adapter);
      const { verifier, challenge } = pkcePair();
      const code = (await host.code({ code_challenge: challenge, code_challenge_method: 'S256' })).get('code')!;
      expectInvalidClient(await host.exchange(code, { verifier, auth: 'none' }));
      const res = await host.exchange(code, { verifier });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    });
  });

  describe('refresh tokens (RFC 6749 6, OAuth 2.0 Security BCP 4.14)', () => {
    it('RFC 6749 6 / BCP 4.14.2: a refresh rotates the refresh token and answers a working access token', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid profile offline_access' });
      const res = await host.refresh(first.refresh_token!);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expectTokenHeaders(res);
      expect(res.body.token_type).toBe('Bearer');
      expect(res.body.refresh_token).toEqual(expect.any(String));
      expect(res.body.refresh_token).not.toBe(first.refresh_token);
      expect(res.body.access_token).not.toBe(first.access_token);
      expect(res.body.scope.split(' ').sort()).toEqual(['offline_access', 'openid', 'profile']);
      expect((await host.userinfo(res.body.access_token)).status).toBe(200);
      expect((await host.refresh(res.body.refresh_token)).status).toBe(200);
    });

    it('RFC 9700 4.14.2: with the default configuration, reusing a rotated refresh token at once fails with invalid_grant and revokes the whole grant', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid offline_access' });
      const second = (await host.refresh(first.refresh_token!)).body as { access_token: string; refresh_token: string };
      expect((await host.userinfo(second.access_token)).status).toBe(200);

      expectTokenError(await host.refresh(first.refresh_token!), 400, 'invalid_grant');
      const userinfo = await host.userinfo(second.access_token);
      expect(userinfo.status).toBe(401);
      expect(userinfo.body.error).toBe('invalid_token');
      expectTokenError(await host.refresh(second.refresh_token), 400, 'invalid_grant');
    });

    it('RFC 9700 4.14.2: a stolen refresh token used after the thief refreshed more often than the grant remembers still revokes the grant', async () => {
      const host = await startHost(adapter);
      const stolen = (await host.tokens({ scope: 'openid offline_access' })).refresh_token!;
      let thief = stolen;
      for (let i = 0; i < 20; i++) {
        const res = await host.refresh(thief);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        thief = res.body.refresh_token;
      }
      const thiefAccess = (await host.refresh(thief)).body as { access_token: string; refresh_token: string };

      expectTokenError(await host.refresh(stolen), 400, 'invalid_grant');
      expect((await host.userinfo(thiefAccess.access_token)).status).toBe(401);
      expectTokenError(await host.refresh(thiefAccess.refresh_token), 400, 'invalid_grant');
    });

    it('RFC 9700 4.14.2: a refresh token of a grant already ended is invalid_grant each time and warns of no revocation; an old generation of a live grant warns once', async () => {
      const logger = capturingLogger();
      const host = await startHost(adapter, { platform: { logger } });
      const revocations = () => logger.records.filter((entry) => entry.message === 'revoked a grant').length;
      // RFC 7009 2.1: the client signs the user out, then keeps presenting the token it revoked.
      const signedOut = (await host.tokens({ scope: 'openid offline_access' })).refresh_token!;
      expect((await host.revoke({ token: signedOut })).status).toBe(200);
      for (let i = 0; i < 5; i++) expectTokenError(await host.refresh(signedOut), 400, 'invalid_grant');
      expect(revocations()).toBe(0);

      const stolen = (await host.tokens({ scope: 'openid offline_access' })).refresh_token!;
      let thief = stolen;
      for (let i = 0; i < 20; i++) thief = (await host.refresh(thief)).body.refresh_token;
      for (let i = 0; i < 5; i++) expectTokenError(await host.refresh(stolen), 400, 'invalid_grant');
      expect(revocations()).toBe(1);
      expectTokenError(await host.refresh(thief), 400, 'invalid_grant');
    });

    it('RFC 9700 4.14.2: a made-up refresh token under a known grant id (it opens every access token) is invalid_grant and ends nothing', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid offline_access' });
      const grantId = first.access_token.split('.')[0]!;
      expectTokenError(await host.refresh(`${grantId}.${'A'.repeat(43)}`), 400, 'invalid_grant');
      expectTokenError(await host.refresh(`${grantId}.${first.access_token.split('.')[1]!}`), 400, 'invalid_grant');
      expect((await host.userinfo(first.access_token)).status).toBe(200);
      expect((await host.refresh(first.refresh_token!)).status).toBe(200);
    });

    it('RFC 6749 6: a refresh asking for a scope not originally granted fails with invalid_scope', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid profile offline_access' });
      expectTokenError(await host.refresh(first.refresh_token!, { scope: 'openid profile email offline_access' }), 400, 'invalid_scope');
    });

    it('RFC 6749 6: a refused refresh (invalid_scope) leaves the refresh token usable and the grant alive', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid profile offline_access' });
      expectTokenError(await host.refresh(first.refresh_token!, { scope: 'openid email offline_access' }), 400, 'invalid_scope');
      const retry = await host.refresh(first.refresh_token!);
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect((await host.userinfo(first.access_token)).status).toBe(200);
    });

    it('RFC 6749 6: a refresh may narrow the scope of the new access token', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid profile email offline_access' });
      const res = await host.refresh(first.refresh_token!, { scope: 'openid email offline_access' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.scope.split(' ').sort()).toEqual(['email', 'offline_access', 'openid']);
      const claims = (await host.userinfo(res.body.access_token)).body as Record<string, unknown>;
      expect(claims.email).toBe('alice@example.com');
      expect(claims.name).toBeUndefined();
    });

    it('RFC 6749 6: after narrowing, the new refresh token keeps the scope of the one it replaced', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid profile email offline_access' });
      const narrowed = await host.refresh(first.refresh_token!, { scope: 'openid offline_access' });
      expect(narrowed.status).toBe(200);
      const again = await host.refresh(narrowed.body.refresh_token, { scope: 'openid profile email offline_access' });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body.scope.split(' ').sort()).toEqual(['email', 'offline_access', 'openid', 'profile']);
    });

    it('RFC 6749 6: a refresh token of another client fails with invalid_grant', async () => {
      const host = await startHost(adapter);
      const first = await host.tokens({ scope: 'openid offline_access' });
      expectTokenError(await host.refresh(first.refresh_token!, {}, OTHER), 400, 'invalid_grant');
    });

    it('RFC 6749 6: an expired refresh token (platform clock) fails with invalid_grant', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock, oauth: { lifetimes: { refreshToken: 600 } } });
      const first = await host.tokens({ scope: 'openid offline_access' });
      clock.advance(601);
      expectTokenError(await host.refresh(first.refresh_token!), 400, 'invalid_grant');
    });
  });
});

const bruteForceHost = (adapter: AdapterName) =>
  startHost(adapter, {
    oauth: { bruteForce: { clientAuthFailures: 3, addressFailures: 3 } },
    platform: { clientIp: (request) => header(request, 'x-test-ip') },
  });

/** A token request that fails after client authentication; the caller's IP comes from `x-test-ip`. */
const attempt = (host: TestHost, ip: string, id: string, secret: string) =>
  host.postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(id, secret), 'x-test-ip': ip });

describe.each(ADAPTER_NAMES)('brute force on client authentication on %s (RFC 6749 10.10, OAuth 2.0 Security BCP 4.15)', (adapter) => {
  it('RFC 6749 10.10: after 3 failed client authentications from one IP, that IP gets 429 with Retry-After even with the right secret; another IP is answered', async () => {
    const host = await bruteForceHost(adapter);
    for (let i = 0; i < 3; i++) expectInvalidClient(await attempt(host, '198.51.100.1', CONFIDENTIAL.id, 'wrong-secret-1234'));
    const blocked = await attempt(host, '198.51.100.1', CONFIDENTIAL.id, CONFIDENTIAL.secret);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.headers['content-type']).toMatch(/^application\/json/);
    expect(blocked.headers['cache-control']).toBe('no-store');
    // Authenticated (the grant is what fails): the guesser slowed itself, not the client.
    expect((await attempt(host, '198.51.100.2', CONFIDENTIAL.id, CONFIDENTIAL.secret)).status).toBe(400);
  });

  it('RFC 6749 10.10: the throttle also holds per IP, across client ids', async () => {
    const host = await bruteForceHost(adapter);
    for (const id of [CONFIDENTIAL.id, OTHER.id, 'no-such-client']) expectInvalidClient(await attempt(host, '198.51.100.30', id, 'wrong-secret-1234'));
    expect((await attempt(host, '198.51.100.30', OTHER.id, OTHER.secret)).status).toBe(429);
  });
});

// Every attempt with an unknown id costs a full-strength decoy scrypt: this one runs on one adapter.
describe('brute force without a client-existence oracle (RFC 6749 10.10)', () => {
  it('RFC 6749 10.10: the throttle answers an unknown client id exactly as a known one', async () => {
    const host = await bruteForceHost('koa');
    const known: Response[] = [];
    const unknown: Response[] = [];
    for (let i = 0; i < 4; i++) known.push(await attempt(host, '198.51.100.10', CONFIDENTIAL.id, 'wrong-secret-1234'));
    for (let i = 0; i < 4; i++) unknown.push(await attempt(host, '198.51.100.20', 'no-such-client', 'wrong-secret-1234'));
    const shape = (res: Response) => ({
      status: res.status,
      body: { ...res.body, error_description: String(res.body.error_description).replace(/\d+/g, 'N') },
      retryAfter: res.headers['retry-after'] === undefined ? undefined : 'set',
      challenge: res.headers['www-authenticate'],
    });
    expect(unknown.map(shape)).toEqual(known.map(shape));
    expect(known.map((r) => r.status)).toEqual([401, 401, 401, 429]);
  });
});

describe('clients from the harness as given', () => {
  // Hashing plain secrets at start-up is the same on every adapter (and slow by design): once is enough.
  it('RFC 6749 2.3.1: the whole flow works with clients configured from plain secrets (oauthTestOptions as given)', async () => {
    const host = await startHost('express', { plainSecrets: true });
    const code = (await host.code({ scope: 'openid offline_access' })).get('code')!;
    const res = await host.exchange(code);
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toEqual(expect.any(String));
  });
});

describe('RFC 6749 5.2 (error_description)', () => {
  it('RFC 6749 5.2: every error_description returned in this file uses only %x20-21 / %x23-5B / %x5D-7E', () => {
    const seen = errorDescriptionsSeen();
    expect(seen.length).toBeGreaterThan(20);
    expect(seen.filter((d) => !RFC6749_DESCRIPTION.test(d))).toEqual([]);
  });
});
