/**
 * The UserInfo endpoint (OIDC Core 5.3, 5.4) as a Bearer-protected resource (RFC 6750 2.1, 3.1).
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, closeHosts, CONFIDENTIAL, errorDescriptionsSeen, RFC6749_DESCRIPTION, startHost, testClock, type TokenResponseBody } from './helpers.js';

const ADMIN_TOKEN = 'operator-token-0123456789abcdef0123456789';

afterEach(closeHosts);

describe.each(ADAPTER_NAMES)('userinfo on %s', (adapter) => {
  it('RFC 6750 3.1: without a token (no Authorization, or another scheme) the answer is 401 with WWW-Authenticate: Bearer and no error code in the header', async () => {
    const host = await startHost(adapter);
    for (const headers of [{}, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }] as Record<string, string>[]) {
      const res = await host.get('/oauth/userinfo', undefined, headers);
      expect(res.status).toBe(401);
      const challenge = res.headers['www-authenticate'] as string;
      expect(challenge).toMatch(/^Bearer\b/);
      expect(challenge).not.toMatch(/error=/);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    // A Bearer header without a well-formed token is a token that is not valid.
    expect((await host.get('/oauth/userinfo', undefined, { authorization: 'Bearer ###' })).headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('RFC 6750 3.1: an unknown token is 401 invalid_token', async () => {
    const host = await startHost(adapter);
    for (const token of ['AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', 'not-ours']) {
      const res = await host.userinfo(token);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer\b.*error="invalid_token"/);
    }
  });

  it('RFC 6750 3.1: a revoked token (its grant ended by a code replay) is 401 invalid_token', async () => {
    const host = await startHost(adapter);
    const code = (await host.code({})).get('code')!;
    const { access_token } = (await host.exchange(code)).body as { access_token: string };
    expect((await host.userinfo(access_token)).status).toBe(200);
    await host.exchange(code);
    const res = await host.userinfo(access_token);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  it('RFC 6750 3.1: an expired token (platform clock past lifetimes.accessToken) is 401 invalid_token', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, oauth: { lifetimes: { accessToken: 300 } } });
    const { access_token, expires_in } = await host.tokens({});
    expect(expires_in).toBeLessThanOrEqual(300);
    clock.advance(299);
    expect((await host.userinfo(access_token)).status).toBe(200);
    clock.advance(2);
    const res = await host.userinfo(access_token);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  it('RFC 6750 3.1 / OIDC Core 5.3: a token whose scope lacks openid is 403 insufficient_scope', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: 'profile email' });
    expect(tokens.id_token).toBeUndefined();
    const res = await host.userinfo(tokens.access_token);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('insufficient_scope');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b.*error="insufficient_scope"/);
  });

  it('OIDC Core 5.4: claims follow scope: profile without email hides email', async () => {
    const host = await startHost(adapter);
    const res = await host.userinfo((await host.tokens({ scope: 'openid profile' })).access_token);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ sub: 'user-alice', name: 'Alice Liddell', preferred_username: 'alice' });
  });

  it('OIDC Core 5.4: email without profile gives email and email_verified, no name; openid alone gives only sub', async () => {
    const host = await startHost(adapter);
    const email = await host.userinfo((await host.tokens({ scope: 'openid email' })).access_token);
    expect(email.body).toEqual({ sub: 'user-alice', email: 'alice@example.com', email_verified: true });
    const bare = await host.userinfo((await host.tokens({ scope: 'openid' }, { user: 'bob' })).access_token);
    expect(bare.body).toEqual({ sub: 'user-bob' });
  });

  it('OIDC Core 5.3.2: sub equals the sub of the id_token issued with the access token', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: 'openid profile email' }, { user: 'bob' });
    const res = await host.userinfo(tokens.access_token);
    expect(res.body.sub).toBe(decodeJwt(tokens.id_token!).sub);
    expect(res.body).toMatchObject({ name: 'Bob Builder', email: 'bob@example.com', email_verified: false });
  });

  it('OIDC Core 5.4 / RFC 6749 6: narrowing an application\'s scopes (admin API) narrows its grants at once (userinfo, introspection) and at the next refresh', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: ADMIN_TOKEN } } });
    const operator = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const registered = await host.http().post('/admin/clients').set(operator).send({ name: 'Shop', redirectUris: [CONFIDENTIAL.redirectUri] });
    const client = { id: registered.body.data.client.id as string, secret: registered.body.data.client_secret as string, redirectUri: CONFIDENTIAL.redirectUri };
    const callback = await host.code({ client_id: client.id, scope: 'openid profile email offline_access' });
    const issued = (await host.exchange(callback.get('code')!, { client })).body as TokenResponseBody;
    expect((await host.userinfo(issued.access_token)).body.email).toBe('alice@example.com');

    const patched = await host.http().patch(`/admin/clients/${client.id}`).set(operator).send({ scopes: ['openid', 'profile', 'offline_access'] });
    expect(patched.status).toBe(200);
    expect((await host.userinfo(issued.access_token)).body).toEqual({ sub: 'user-alice', name: 'Alice Liddell', preferred_username: 'alice' });
    expect((await host.introspect({ token: issued.refresh_token! }, { basic: client })).body).toMatchObject({ active: true, scope: 'openid profile offline_access' });

    expect((await host.refresh(issued.refresh_token!, { scope: 'openid email' }, client)).body.error).toBe('invalid_scope');
    const refreshed = await host.refresh(issued.refresh_token!, {}, client);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.scope).toBe('openid profile offline_access');
    expect(decodeJwt(refreshed.body.id_token as string).email).toBeUndefined();
    expect((await host.userinfo(refreshed.body.access_token as string)).body.email).toBeUndefined();
  });

  it('OIDC Core 5.3.1: POST userinfo with a Bearer header works too', async () => {
    const host = await startHost(adapter);
    const res = await host.userinfo((await host.tokens({ scope: 'openid email' })).access_token, 'POST');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sub: 'user-alice', email: 'alice@example.com', email_verified: true });
  });
});

describe('RFC 6749 5.2 (error_description)', () => {
  it('RFC 6749 5.2 / RFC 6750 3: every error_description returned in this file uses only %x20-21 / %x23-5B / %x5D-7E', () => {
    const seen = errorDescriptionsSeen();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((d) => !RFC6749_DESCRIPTION.test(d))).toEqual([]);
  });
});
