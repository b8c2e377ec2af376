/**
 * Token introspection (RFC 7662) at POST /oauth/introspect, on every adapter.
 */
import type { Response } from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, closeHosts, OTHER, PUBLIC, SERVICE, startHost, testClock } from './helpers.js';

afterEach(closeHosts);

const SCOPE = 'openid profile offline_access';

function expectInactive(res: Response): void {
  expect(res.status).toBe(200);
  expect(res.body).toStrictEqual({ active: false });
  expect(res.headers['cache-control']).toBe('no-store');
}

describe.each(ADAPTER_NAMES)('introspection on %s', (adapter) => {
  it('RFC 7662 2.2: a client introspects its own live access token', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock });
    const tokens = await host.tokens({ scope: SCOPE });
    const res = await host.introspect({ token: tokens.access_token });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toStrictEqual({
      active: true,
      scope: SCOPE,
      client_id: 'rp-client',
      sub: 'user-alice',
      exp: clock.seconds() + 3600,
      iat: clock.seconds(),
      token_type: 'Bearer',
      iss: host.issuer,
    });
  });

  it('RFC 7662 2.1: a refresh token is introspected too, with or without the hint', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    for (const hint of [{}, { token_type_hint: 'refresh_token' }, { token_type_hint: 'access_token' }] as Record<string, string>[]) {
      const res = await host.introspect({ token: tokens.refresh_token!, ...hint });
      expect(res.body).toMatchObject({ active: true, client_id: 'rp-client', sub: 'user-alice', scope: SCOPE, iss: host.issuer });
    }
  });

  it('RFC 7662 2.2: expired, revoked and unknown tokens are exactly {"active":false}', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, oauth: { lifetimes: { accessToken: 300 } } });
    const expiring = await host.tokens({ scope: SCOPE });
    clock.advance(301);
    expectInactive(await host.introspect({ token: expiring.access_token }));

    const revoked = await host.tokens({ scope: SCOPE });
    await host.revoke({ token: revoked.access_token });
    expectInactive(await host.introspect({ token: revoked.access_token }));
    await host.revoke({ token: revoked.refresh_token! });
    expectInactive(await host.introspect({ token: revoked.refresh_token! }));

    expectInactive(await host.introspect({ token: 'AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' }));
    expectInactive(await host.introspect({ token: 'not-ours' }));
  });

  it('RFC 7662 2.2 / 4: another client\'s token is {"active":false}, unless the caller is registered with introspect: true', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    expectInactive(await host.introspect({ token: tokens.access_token }, { basic: OTHER }));
    const res = await host.introspect({ token: tokens.access_token }, { basic: SERVICE });
    expect(res.body).toMatchObject({ active: true, client_id: 'rp-client', sub: 'user-alice' });
  });

  it('RFC 7662 2.2: a client_credentials token is active with its client and no sub', async () => {
    const host = await startHost(adapter);
    const { access_token } = (await host.token({ grant_type: 'client_credentials', scope: 'profile' }, { basic: SERVICE })).body as { access_token: string };
    const res = await host.introspect({ token: access_token }, { basic: SERVICE });
    expect(res.body).toMatchObject({ active: true, client_id: SERVICE.id, scope: 'profile', token_type: 'Bearer' });
    expect(res.body.sub).toBeUndefined();
  });

  it('RFC 7662 2.1: without client authentication, or as a public client, the answer is 401 invalid_client with a challenge', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    for (const res of [
      await host.introspect({ token: tokens.access_token }, 'none'),
      await host.introspect({ token: tokens.access_token, client_id: PUBLIC.id }, 'none'),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic\b/);
    }
  });
});
