/**
 * Brute force on client authentication at the token endpoint (RFC 6749 2.3.1, 5.2 and 10.10;
 * RFC 6585 4), on the memory, Redis and PostgreSQL stores: a failure is reserved before the secret
 * is checked, so neither a burst, nor successes of the real client in between, nor several
 * platform instances on one store get more secret checks than the limit (10 per 15 minutes).
 * Every 401 below is one secret check; every 429 is an attempt refused before any.
 */
import type { Response } from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { header } from '../../src/core/http.js';
import { hashClientSecret } from '../../src/oauth/client-secret.js';
import type { OAuthClientConfig } from '../../src/oauth/options.js';
import { createMemoryOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { ADAPTER_NAMES, basic, closeHosts, CONFIDENTIAL, startHost, type AdapterName, type TestHost } from './compliance/helpers.js';
import { memoryStores, postgresStores, redisStores, type StoreFactory } from './shared-stores.js';

const LIMIT = 10;
const WINDOW_SECONDS = 900;
const BURST = 200;
const WRONG = 'wrong-secret-1234';

let fullStrength: Promise<string> | undefined;
/** The client's secret hashed at full strength, so every check takes as long as in production: the window a burst races in. */
async function clients(): Promise<OAuthClientConfig[]> {
  fullStrength ??= hashClientSecret(CONFIDENTIAL.secret);
  return [{ id: CONFIDENTIAL.id, secretHash: await fullStrength, redirectUris: [CONFIDENTIAL.redirectUri] }];
}

// A burst of 200 checks queues on one connection pool far longer than a healthy call takes: the
// store deadline is not what these tests measure.
const hostOn = async (adapter: AdapterName, store: OAuthStore) =>
  startHost(adapter, { oauth: { store, clients: await clients(), storeTimeoutMs: 30_000 }, platform: { clientIp: (request) => header(request, 'x-test-ip') } });

/** Bursts of HTTP requests and real scrypt checks: generous on a busy machine. */
const SLOW = { timeout: 60_000 };

/** A token request that gets past client authentication only to fail on its grant (400 invalid_grant). */
const attempt = (host: TestHost, ip: string, secret: string, id: string = CONFIDENTIAL.id) =>
  host.postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(id, secret), 'x-test-ip': ip });

/** How many answers of each status; every 401 and 429 checked for its RFC shape on the way. */
function tally(responses: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of responses) {
    counts[res.status] = (counts[res.status] ?? 0) + 1;
    if (res.status === 401 || res.status === 429) expect(res.body.error).toBe('invalid_client');
    // RFC 6749 2.3.1 / 5.2: a failed Basic authentication answers 401 with a challenge.
    if (res.status === 401) expect(res.headers['www-authenticate']).toMatch(/^Basic\b/);
    // RFC 6585 4: 429 says how long to wait.
    if (res.status === 429) {
      const wait = Number(res.headers['retry-after']);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(WINDOW_SECONDS);
    }
  }
  return counts;
}

const concurrently = (count: number, send: (i: number) => Promise<Response>) => Promise.all(Array.from({ length: count }, (_, i) => send(i)));

function bruteForceSuite(makeStores: () => StoreFactory, adapters: readonly AdapterName[]) {
  let stores: StoreFactory;
  beforeEach(() => {
    stores = makeStores();
  });
  afterEach(async () => {
    await closeHosts();
    await stores.close();
  });

  it.each(adapters)(
    'RFC 6749 10.10 / RFC 6585 4: 200 concurrent wrong secrets from one IP on %s run exactly 10 secret checks; the rest get 429 with Retry-After',
    async (adapter) => {
      const host = await hostOn(adapter, stores.open());
      expect(tally(await concurrently(BURST, () => attempt(host, '198.51.100.1', WRONG)))).toEqual({ 401: LIMIT, 429: BURST - LIMIT });
    },
  );

  it('RFC 6749 10.10: 200 concurrent wrong secrets from 200 IPs are held by the client id: exactly 10 secret checks', async () => {
    const host = await hostOn('express', stores.open());
    const answers = await concurrently(BURST, (i) => attempt(host, `10.1.${i >> 8}.${i & 255}`, WRONG));
    expect(tally(answers)).toEqual({ 401: LIMIT, 429: BURST - LIMIT });
    // The right secret waits for the window too: the client id is what is blocked.
    expect((await attempt(host, '192.0.2.200', CONFIDENTIAL.secret)).status).toBe(429);
  });

  it('RFC 6749 2.3.1 / 5.2: 200 concurrent attempts with an unknown client id get the same answers: 10 checks, then 429', async () => {
    const host = await hostOn('koa', stores.open());
    expect(tally(await concurrently(BURST, () => attempt(host, '198.51.100.2', WRONG, 'no-such-client')))).toEqual({ 401: LIMIT, 429: BURST - LIMIT });
  });

  it("RFC 6749 10.10: the real client's successes between guesses from other IPs neither reset the client's count nor lock the real client out", async () => {
    const host = await hostOn('connect', stores.open());
    const guesses: Response[] = [];
    const real: Response[] = [];
    for (let i = 0; i < 30; i++) {
      guesses.push(await attempt(host, `203.0.113.${i}`, WRONG));
      real.push(await attempt(host, '192.0.2.200', CONFIDENTIAL.secret));
    }
    expect(tally(guesses)).toEqual({ 401: LIMIT, 429: 30 - LIMIT });
    // Authenticated every time (the grant is what fails): a secret this process verified is no guess.
    expect(real.map((res) => res.status)).toEqual(Array(30).fill(400));
  });

  it("RFC 6749 10.10: a caller's successes do not reset the failures of its own IP either", async () => {
    const host = await hostOn('express', stores.open());
    // Another client's secret from the same IP: failures stay counted per IP across client ids.
    for (let i = 0; i < LIMIT - 1; i++) expect((await attempt(host, '198.51.100.3', WRONG, 'no-such-client')).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await attempt(host, '198.51.100.3', CONFIDENTIAL.secret)).status).toBe(400);
    expect((await attempt(host, '198.51.100.3', WRONG, 'other-unknown')).status).toBe(401);
    expect((await attempt(host, '198.51.100.3', WRONG, 'third-unknown')).status).toBe(429);
  });
}

describe('brute force on client authentication with the memory store', SLOW, () => {
  bruteForceSuite(memoryStores, ADAPTER_NAMES);

  it('a store failure while the client is looked up is a 503 (RFC 6749 5.2 temporarily_unavailable), not a failed authentication', async () => {
    const memory = createMemoryOAuthStore();
    // Registered in the store (configured clients never need it).
    const stored = { ...(await clients())[0]!, id: 'stored-client', name: 'Stored', scopes: ['openid'], grants: ['authorization_code' as const, 'refresh_token' as const] };
    await memory.saveClient(stored);
    let failures = 0;
    const store: OAuthStore = { ...memory, getClient: (id) => (failures-- > 0 ? Promise.reject(new Error('store down')) : memory.getClient(id)) };
    const host = await hostOn('express', store);
    failures = LIMIT + 2;
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await attempt(host, '198.51.100.9', CONFIDENTIAL.secret, stored.id);
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('temporarily_unavailable');
    }
    expect((await attempt(host, '198.51.100.9', CONFIDENTIAL.secret, stored.id)).status).toBe(400);
  });
});

/** The adapters only carry requests to the same core: every adapter runs the burst with the memory store above. */
function sharedStoreSuite(makeStores: () => StoreFactory) {
  bruteForceSuite(makeStores, ['koa']);

  describe('two platform instances on one store (each with its own connection)', () => {
    let stores: StoreFactory;
    beforeEach(() => {
      stores = makeStores();
    });
    afterEach(async () => {
      await closeHosts();
      await stores.close();
    });

    it('RFC 6749 10.10: wrong secrets sent to each in turn get exactly 10 checks between them', async () => {
      const hosts = [await hostOn('express', stores.open()), await hostOn('koa', stores.open())];
      const answers: Response[] = [];
      for (let i = 0; i < 30; i++) answers.push(await attempt(hosts[i % 2]!, `203.0.113.${i}`, WRONG));
      expect(tally(answers)).toEqual({ 401: LIMIT, 429: 30 - LIMIT });
      expect(answers.slice(0, LIMIT).map((res) => res.status)).toEqual(Array(LIMIT).fill(401));
    });

    it('RFC 6749 10.10 / RFC 6585 4: 200 concurrent wrong secrets spread over both get exactly 10 checks between them', async () => {
      const hosts = [await hostOn('express', stores.open()), await hostOn('connect', stores.open())];
      expect(tally(await concurrently(BURST, (i) => attempt(hosts[i % 2]!, '198.51.100.4', WRONG)))).toEqual({ 401: LIMIT, 429: BURST - LIMIT });
    });
  });
}

describeRedis('brute force on client authentication with the Redis store', SLOW, () => {
  sharedStoreSuite(redisStores);
});

describePostgres('brute force on client authentication with the PostgreSQL store', SLOW, () => {
  sharedStoreSuite(postgresStores);
});
