/**
 * Clients from `oauth.clients` are answered from each process's own options (docs/oauth.md#clients):
 * two processes on one shared store with different redirect URIs for the same client id each keep
 * their own, however often they restart, and a record of the same id in the store never replaces
 * the configured one.
 */
import { decodeJwt } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { authorizationCode, bearer, closeHosts as closeQuotaHosts, exchange, ping, startHost as startQuotaHost, type QuotaHost } from '../http/quota-helpers.js';
import { basic, callbackOf, closeHosts, CONFIDENTIAL, expectErrorPage, startHost, USERS, type TestHost } from './compliance/helpers.js';
import { cheapClients } from '../support/oauth.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { memoryStores, postgresStores, redisStores, type StoreFactory } from './shared-stores.js';

afterEach(closeHosts);
afterEach(closeQuotaHosts);

const STAGING = 'https://staging.app.example/callback';
const PRODUCTION = 'https://app.example/callback';

async function processWith(store: ReturnType<StoreFactory['open']>, redirectUri: string): Promise<TestHost> {
  const clients = (await cheapClients()).map((client) => (client.id === CONFIDENTIAL.id ? { ...client, redirectUris: [redirectUri] } : client));
  return startHost('express', { oauth: { store, clients } });
}

/** A process with a guarded route (test/http/quota-helpers.ts) whose CONFIDENTIAL client has `scopes` (its default when undefined). */
async function quotaProcess(store: ReturnType<StoreFactory['open']>, scopes: string[] | undefined): Promise<QuotaHost> {
  const clients = (await cheapClients()).map((client) => (client.id === CONFIDENTIAL.id && scopes ? { ...client, scopes: scopes as typeof client.scopes } : client));
  return startQuotaHost('express', { quota: { defaults: { minute: 100 } }, oauth: { store, clients } });
}

async function userinfo(host: QuotaHost, token: string): Promise<Record<string, unknown>> {
  const res = await host.http().get('/oauth/userinfo').set(bearer(token));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Record<string, unknown>;
}

/** A form POST to an endpoint that authenticates the confidential client. */
function tokenForm(host: QuotaHost, path: string, form: Record<string, string>) {
  return host
    .http()
    .post(path)
    .set({ 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CONFIDENTIAL.id, CONFIDENTIAL.secret) })
    .send(new URLSearchParams(form).toString());
}

/** RFC 6749 3.1.2.3: the redirect URI must be one registered for the client. */
async function accepts(host: TestHost, redirectUri: string): Promise<boolean> {
  const res = await host.authorize({ redirect_uri: redirectUri, prompt: 'none' }, { user: 'alice' });
  if (res.status === 400) {
    expectErrorPage(res);
    return false;
  }
  // prompt=none without a consent: the error comes back to the (accepted) redirect URI.
  expect(callbackOf(res, redirectUri).get('error')).toBe('consent_required');
  return true;
}

function suite(factory: () => StoreFactory) {
  const stores = factory();
  afterAll(() => stores.close());

  it('two processes with different redirect URIs for one client id each keep their own, restarts included', async () => {
    const staging = await processWith(stores.open(), STAGING);
    const production = await processWith(stores.open(), PRODUCTION);
    // Started again after the other: nothing it wrote could have won.
    const stagingAgain = await processWith(stores.open(), STAGING);
    for (const host of [staging, stagingAgain]) {
      expect(await accepts(host, STAGING)).toBe(true);
      expect(await accepts(host, PRODUCTION)).toBe(false);
    }
    expect(await accepts(production, PRODUCTION)).toBe(true);
    expect(await accepts(production, STAGING)).toBe(false);
  });

  it('RFC 6749 6 / OIDC Core 5.4: a process configured with fewer scopes for a client serves its existing grants narrowed (guard, userinfo, introspection) and refreshes them narrowed', async () => {
    const store = stores.open();
    const wide = await quotaProcess(store, undefined);
    const narrow = await quotaProcess(stores.shared ? stores.open() : store, ['openid', 'profile', 'offline_access']);
    // Bob: the other tests of this store ask about Alice's consent.
    const code = await authorizationCode(wide, CONFIDENTIAL, { user: 'bob', scope: 'openid profile email offline_access' });
    const issued = (await exchange(wide, CONFIDENTIAL, code)).body as { access_token: string; refresh_token: string };

    // The process that still allows email serves it; the narrowed one serves the rest only.
    expect((await userinfo(wide, issued.access_token)).email).toBe(USERS.bob!.email);
    expect((await ping(narrow, issued.access_token)).body.platformAuth.scope).toEqual(['openid', 'profile', 'offline_access']);
    const claims = await userinfo(narrow, issued.access_token);
    expect([claims.name, claims.email]).toEqual([USERS.bob!.name, undefined]);
    const introspected = await tokenForm(narrow, '/oauth/introspect', { token: issued.refresh_token });
    expect(introspected.body).toMatchObject({ active: true, scope: 'openid profile offline_access' });

    // Asking the narrowed process to refresh into email is refused; refreshing gives the narrowed scope, in every process.
    expect((await tokenForm(narrow, '/oauth/token', { grant_type: 'refresh_token', refresh_token: issued.refresh_token, scope: 'openid email' })).body.error).toBe('invalid_scope');
    const refreshed = await tokenForm(narrow, '/oauth/token', { grant_type: 'refresh_token', refresh_token: issued.refresh_token });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    const body = refreshed.body as { access_token: string; id_token: string; scope: string };
    expect(body.scope).toBe('openid profile offline_access');
    expect(decodeJwt(body.id_token).email).toBeUndefined();
    expect((await userinfo(wide, body.access_token)).email).toBeUndefined();
  });

  it('a stored record with a configured id does not replace the configured client', async () => {
    const store = stores.open();
    await store.saveClient({ id: CONFIDENTIAL.id, name: 'Impostor', redirectUris: ['https://evil.example/cb'], scopes: ['openid'], grants: ['authorization_code'] });
    const host = await processWith(store, PRODUCTION);
    expect(await accepts(host, PRODUCTION)).toBe(true);
    expect(await accepts(host, 'https://evil.example/cb')).toBe(false);
  });
}

describe('configured clients on the memory store', () => suite(memoryStores));
describeRedis('configured clients on a shared Redis store', () => suite(redisStores));
describePostgres('configured clients on a shared PostgreSQL store', () => suite(postgresStores));
