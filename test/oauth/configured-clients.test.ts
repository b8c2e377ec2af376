/**
 * Clients from `oauth.clients` are answered from each process's own options (docs/oauth.md#clients):
 * two processes on one shared store with different redirect URIs for the same client id each keep
 * their own, however often they restart, and a record of the same id in the store never replaces
 * the configured one.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cheapClients } from '../support/oauth.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { callbackOf, closeHosts, CONFIDENTIAL, expectErrorPage, startHost, type TestHost } from './compliance/helpers.js';
import { memoryStores, postgresStores, redisStores, type StoreFactory } from './shared-stores.js';

afterEach(closeHosts);

const STAGING = 'https://staging.app.example/callback';
const PRODUCTION = 'https://app.example/callback';

async function processWith(store: ReturnType<StoreFactory['open']>, redirectUri: string): Promise<TestHost> {
  const clients = (await cheapClients()).map((client) => (client.id === CONFIDENTIAL.id ? { ...client, redirectUris: [redirectUri] } : client));
  return startHost('express', { oauth: { store, clients } });
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
