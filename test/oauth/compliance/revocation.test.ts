/**
 * Token revocation (RFC 7009) at POST /oauth/revoke, on every adapter and, for the quota guard,
 * on every store.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createMemoryOAuthStore } from '../../../src/oauth/store/index.js';
import { describePostgres, describeRedis } from '../../support/services.js';
import { memoryStores, postgresStores, redisStores, type StoreFactory } from '../shared-stores.js';
import { ADAPTER_NAMES, closeHosts, losingRotationAnswers, OTHER, PUBLIC, startHost, type TestHost } from './helpers.js';

afterEach(closeHosts);

const SCOPE = 'openid offline_access';

function quota(host: TestHost, accessToken: string) {
  return host.get('/openapi/v1/get_quota?api_path=/openapi/v1/ping', undefined, { authorization: `Bearer ${accessToken}` });
}

describe.each(ADAPTER_NAMES)('revocation on %s', (adapter) => {
  it('RFC 7009 2.1: a revoked access token stops working at once (userinfo, get_quota) and the refresh token lives on', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    const res = await host.revoke({ token: tokens.access_token, token_type_hint: 'access_token' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect((await host.userinfo(tokens.access_token)).status).toBe(401);
    expect((await quota(host, tokens.access_token)).status).toBe(401);
    expect((await host.refresh(tokens.refresh_token!)).status).toBe(200);
  });

  it('RFC 7009 2.1: a refresh token revokes its grant: the refresh token and the access tokens of the grant stop working', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    // A wrong hint costs a second lookup only.
    expect((await host.revoke({ token: tokens.refresh_token!, token_type_hint: 'access_token' })).status).toBe(200);
    expect((await host.refresh(tokens.refresh_token!)).body.error).toBe('invalid_grant');
    expect((await host.userinfo(tokens.access_token)).status).toBe(401);
  });

  it('RFC 7009 2.1 / RFC 9700 4.14.2: revoking a rotated-out refresh token ends the grant: neither it nor the current refresh token issues tokens again', async () => {
    const host = await startHost(adapter);
    const first = await host.tokens({ scope: SCOPE });
    const second = (await host.refresh(first.refresh_token!)).body as { access_token: string; refresh_token: string };
    expect((await host.revoke({ token: first.refresh_token!, token_type_hint: 'refresh_token' })).status).toBe(200);
    expect((await host.refresh(first.refresh_token!)).body.error).toBe('invalid_grant');
    expect((await host.refresh(second.refresh_token)).body.error).toBe('invalid_grant');
    expect((await host.userinfo(second.access_token)).status).toBe(401);
  });

  it('RFC 7009 2.2: a refresh token whose rotation is still pending (its answer lost), once revoked with 200, never issues tokens again', async () => {
    const memory = createMemoryOAuthStore();
    // The rotation commits, then its answer is lost on the way back.
    const { store, loseNext } = losingRotationAnswers(memory);
    const host = await startHost(adapter, { oauth: { store } });
    const tokens = await host.tokens({ scope: SCOPE });
    loseNext();
    expect((await host.refresh(tokens.refresh_token!)).status).toBe(503);
    expect((await host.revoke({ token: tokens.refresh_token! })).status).toBe(200);
    expect((await host.refresh(tokens.refresh_token!)).body.error).toBe('invalid_grant');
  });

  it('RFC 7009 2.2: an unknown or malformed token is 200, and a token of another client is left alone (still 200)', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    for (const token of ['AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', 'not-ours']) {
      expect((await host.revoke({ token })).status).toBe(200);
    }
    expect((await host.revoke({ token: tokens.access_token }, { basic: OTHER })).status).toBe(200);
    expect((await host.revoke({ token: tokens.refresh_token! }, { basic: OTHER })).status).toBe(200);
    expect((await host.userinfo(tokens.access_token)).status).toBe(200);
    expect((await host.refresh(tokens.refresh_token!)).status).toBe(200);
  });

  it('RFC 7009 2.1: without client authentication the answer is 401 invalid_client; a missing token is invalid_request', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    const res = await host.revoke({ token: tokens.access_token }, 'none');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.headers['www-authenticate']).toMatch(/^Basic\b/);
    expect((await host.userinfo(tokens.access_token)).status).toBe(200);
    expect((await host.revoke({})).body.error).toBe('invalid_request');
  });

  it('RFC 7009 2.1: a public client revokes its own tokens by client_id', async () => {
    const host = await startHost(adapter);
    const res = await host.revoke({ token: 'AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', client_id: PUBLIC.id }, 'none');
    expect(res.status).toBe(200);
  });
});

function describeGuardRevocation(factory: () => StoreFactory) {
  const stores = factory();
  afterAll(() => stores.close());
  it('RFC 7009 2.1: a revoked access token is refused by the quota guard at once', async () => {
    const host = await startHost('express', { oauth: { store: stores.open() } });
    const tokens = await host.tokens({ scope: SCOPE });
    expect((await quota(host, tokens.access_token)).status).toBe(200);
    expect((await host.revoke({ token: tokens.access_token })).status).toBe(200);
    expect((await quota(host, tokens.access_token)).status).toBe(401);
  });
}

describe('revocation and the guard on memory', () => describeGuardRevocation(memoryStores));
describeRedis('revocation and the guard on Redis', () => describeGuardRevocation(redisStores));
describePostgres('revocation and the guard on PostgreSQL', () => describeGuardRevocation(postgresStores));
