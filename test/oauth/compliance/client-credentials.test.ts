/**
 * The client_credentials grant (RFC 6749 4.4): a confidential client's own token, no user.
 */
import type { Response } from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, basic, closeHosts, CONFIDENTIAL, PUBLIC, SERVICE, startHost } from './helpers.js';

afterEach(closeHosts);

function expectError(res: Response, status: number, error: string): void {
  expect({ status: res.status, error: res.body.error }, JSON.stringify(res.body)).toEqual({ status, error });
  expect(res.headers['cache-control']).toBe('no-store');
}

describe.each(ADAPTER_NAMES)('client_credentials on %s', (adapter) => {
  it('RFC 6749 4.4.3: a client with the grant gets a Bearer access token, no refresh token, no id_token; scope defaults to its scopes without openid and offline_access', async () => {
    const host = await startHost(adapter);
    const res = await host.token({ grant_type: 'client_credentials' }, { basic: SERVICE });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'profile email' });
  });

  it('RFC 6749 3.3: a narrower scope is granted as asked; openid, offline_access or a scope of no use are invalid_scope', async () => {
    const host = await startHost(adapter);
    const res = await host.token({ grant_type: 'client_credentials', scope: 'email' }, { basic: SERVICE });
    expect(res.body.scope).toBe('email');
    for (const scope of ['openid', 'email offline_access', 'phone']) {
      expectError(await host.token({ grant_type: 'client_credentials', scope }, { basic: SERVICE }), 400, 'invalid_scope');
    }
  });

  it('RFC 6749 5.2: a client without the grant is unauthorized_client; a public client and a wrong secret are invalid_client', async () => {
    const host = await startHost(adapter);
    expectError(await host.token({ grant_type: 'client_credentials' }, { basic: CONFIDENTIAL }), 400, 'unauthorized_client');
    expectError(await host.token({ grant_type: 'client_credentials', client_id: PUBLIC.id }, 'none'), 401, 'invalid_client');
    const wrong = await host.token({ grant_type: 'client_credentials' }, { basicRaw: basic(SERVICE.id, 'not-the-secret') });
    expectError(wrong, 401, 'invalid_client');
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic\b/);
  });

  it('RFC 6749 2.3.1 / 10.10: wrong secrets on this grant count towards the client-authentication limit', async () => {
    const host = await startHost(adapter, { oauth: { bruteForce: { clientAuthFailures: 2 } } });
    for (let i = 0; i < 2; i += 1) {
      expectError(await host.token({ grant_type: 'client_credentials' }, { basicRaw: basic(SERVICE.id, `wrong-${i}`) }), 401, 'invalid_client');
    }
    const blocked = await host.token({ grant_type: 'client_credentials' }, { basic: SERVICE });
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBeTruthy();
  });

  it('RFC 6750 2.1: the token identifies the application to get_quota; userinfo refuses it, having no user', async () => {
    const host = await startHost(adapter);
    const { access_token } = (await host.token({ grant_type: 'client_credentials' }, { basic: SERVICE })).body as { access_token: string };
    const quota = await host.get('/openapi/v1/get_quota?api_path=/openapi/v1/ping', undefined, { authorization: `Bearer ${access_token}` });
    expect(quota.status, JSON.stringify(quota.body)).toBe(200);
    expect(quota.body.code).toBe(0);
    const userinfo = await host.userinfo(access_token);
    expect(userinfo.status).toBe(403);
    expect(userinfo.headers['www-authenticate']).toMatch(/^Bearer\b/);
  });
});
