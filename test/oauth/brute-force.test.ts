/**
 * Brute force on client authentication at the token endpoint (RFC 6749 2.3.1, 5.2 and 10.10;
 * RFC 6585 4), on the memory, Redis and PostgreSQL stores. Failures count per caller address and
 * client id (10 per 15 minutes) and per caller address (100): the guesser slows itself down,
 * never the client it guesses at. A failure is reserved before the secret is checked, so neither
 * a burst nor several platform instances on one store get more secret checks than the limit.
 * Every 401 below is one secret check; every 429 is an attempt refused before any. The attacker
 * and the legitimate client send from different loopback addresses.
 *
 * Whole though past 350 lines: one suite runs on every store and adapter, and the suites for
 * shared stores and for failing give-backs reuse its clients, hosts and tallies.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { header } from '../../src/core/http.js';
import { hashClientSecret } from '../../src/oauth/client-secret.js';
import type { BruteForceOptions, OAuthClientConfig } from '../../src/oauth/options.js';
import { createMemoryOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { GIVE_BACK_FAILURE } from '../../src/oauth/store/redis-scripts.js';
import { postFormFrom, type Answer } from '../support/from-address.js';
import { cheapClients, oauthTestOptions } from '../support/oauth.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { ADAPTER_NAMES, basic, closeHosts, CONFIDENTIAL, expectErrorPage, pkcePair, PUBLIC, SERVICE, startHost, type AdapterName, type Client, type TestHost } from './compliance/helpers.js';
import { memoryStores, postgresStores, redisStores, type StoreFactory } from './shared-stores.js';
import { scanKeys } from '../../src/core/redis-scan.js';

const LIMIT = 10;
const ADDRESS_LIMIT = 100;
const WINDOW_SECONDS = 900;
const BURST = 200;
const WRONG = 'wrong-secret-1234';
const GUESSER = '127.0.0.9';
const LEGITIMATE = '127.0.0.1';

const USED = new Set([CONFIDENTIAL.id, PUBLIC.id, SERVICE.id]);

let fullStrength: Promise<OAuthClientConfig[]> | undefined;
/**
 * The clients' secrets hashed at full strength, so every check takes as long as in production:
 * the window a burst races in. Tests that send one request at a time use `cheapClients()` (the
 * same code, cheap scrypt parameters).
 */
function fullStrengthClients(): Promise<OAuthClientConfig[]> {
  fullStrength ??= Promise.all(
    (oauthTestOptions().clients ?? [])
      .filter((client) => USED.has(client.id))
      .map(async ({ secret, ...client }) => (secret === undefined ? client : { ...client, secretHash: await hashClientSecret(secret) })),
  );
  return fullStrength;
}

const sequentialClients = async () => (await cheapClients()).filter((client) => USED.has(client.id));

// A burst of 200 checks queues on one connection pool far longer than a healthy call takes: the
// store deadline is not what these tests measure.
const startOn = async (adapter: AdapterName, store: OAuthStore, clients: OAuthClientConfig[], bruteForce?: BruteForceOptions) =>
  startHost(adapter, { oauth: { store, clients, storeTimeoutMs: 30_000, bruteForce } });
/** A host for concurrent requests: full-strength secret checks. */
const burstHostOn = async (adapter: AdapterName, store: OAuthStore, bruteForce?: BruteForceOptions) => startOn(adapter, store, await fullStrengthClients(), bruteForce);
/** A host for requests sent one at a time: the counts do not depend on how long a check takes. */
const sequentialHostOn = async (adapter: AdapterName, store: OAuthStore, bruteForce?: BruteForceOptions) =>
  startOn(adapter, store, await sequentialClients(), bruteForce);

/** Bursts of HTTP requests and real scrypt checks: generous on a busy machine. */
const SLOW = { timeout: 90_000 };

const token = (host: TestHost, from: string, form: Record<string, string>, authorization: string) =>
  postFormFrom(from, `${host.origin}/oauth/token`, form, { authorization });

/** A token request that gets past client authentication only to fail on its grant (400 invalid_grant). */
const attempt = (host: TestHost, from: string, secret: string, id: string = CONFIDENTIAL.id) =>
  token(host, from, { grant_type: 'refresh_token', refresh_token: 'x' }, basic(id, secret));

/** How many answers of each status; every 401 and 429 checked for its RFC shape on the way. */
function tally(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of answers) {
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

const concurrently = (count: number, send: (i: number) => Promise<Answer>) => Promise.all(Array.from({ length: count }, (_, i) => send(i)));

async function sequentially(count: number, send: (i: number) => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i++) answers.push(await send(i));
  return answers;
}

interface Grant {
  name: string;
  client: Client;
  form(host: TestHost): Promise<Record<string, string>>;
}

/**
 * `spray`: the single-instance address-limit test; on a shared store the two-instance variant
 * below makes the same 100 full-strength checks and asserts the same, so it runs once.
 */
function bruteForceSuite(makeStores: () => StoreFactory, adapters: readonly AdapterName[], { spray = true } = {}) {
  let stores: StoreFactory;
  beforeEach(() => {
    stores = makeStores();
  });
  afterEach(async () => {
    await closeHosts();
    await stores.close();
  });

  it.each(adapters)(
    'RFC 6749 10.10 / RFC 6585 4: 14 wrong secrets from 127.0.0.9 on %s slow 127.0.0.9 alone: from 127.0.0.1 the right secret exchanges a code, refreshes and gets client_credentials tokens',
    async (adapter) => {
      const store = stores.open();
      // The refresh token comes from an instance of its own: the instances below have verified no secret yet.
      const issuing = await sequentialHostOn(adapter, store);
      const { refresh_token } = await issuing.tokens({ scope: 'openid offline_access' });
      const grants: Grant[] = [
        {
          name: 'authorization_code',
          client: CONFIDENTIAL,
          form: async (host) => ({ grant_type: 'authorization_code', code: (await host.code()).get('code')!, redirect_uri: CONFIDENTIAL.redirectUri }),
        },
        { name: 'refresh_token', client: CONFIDENTIAL, form: async () => ({ grant_type: 'refresh_token', refresh_token: refresh_token! }) },
        { name: 'client_credentials', client: SERVICE, form: async () => ({ grant_type: 'client_credentials' }) },
      ];
      for (const [i, grant] of grants.entries()) {
        const host = await sequentialHostOn(adapter, store);
        // A guesser of its own per grant: on a shared store the counts of the one before live on.
        const guesser = `127.0.0.${9 + i}`;
        const form = await grant.form(host);
        const guesses = await sequentially(LIMIT + 4, () => token(host, guesser, form, basic(grant.client.id, WRONG)));
        expect(tally(guesses), grant.name).toEqual({ 401: LIMIT, 429: 4 });
        // The guesser's address stays slowed for this client, whatever it sends.
        expect((await token(host, guesser, form, basic(grant.client.id, grant.client.secret!))).status, grant.name).toBe(429);
        const right = await token(host, LEGITIMATE, form, basic(grant.client.id, grant.client.secret!));
        expect(right.status, `${grant.name}: ${JSON.stringify(right.body)}`).toBe(200);
        expect(right.body.access_token).toEqual(expect.any(String));
      }
    },
  );

  it.each(adapters)(
    'RFC 6749 2.3 / 10.10: a public client is never locked out on %s: 30 Basic passwords for it from 127.0.0.9 are each a 401, and it exchanges its codes from 127.0.0.9 and 127.0.0.1',
    async (adapter) => {
      const host = await sequentialHostOn(adapter, stores.open());
      const passwords = await concurrently(30, (i) => token(host, GUESSER, { grant_type: 'refresh_token', refresh_token: 'x' }, basic(PUBLIC.id, `${WRONG}-${i}`)));
      expect(tally(passwords)).toEqual({ 401: 30 });
      for (const from of [GUESSER, LEGITIMATE]) {
        const { verifier, challenge } = pkcePair();
        const callback = await host.code({ client_id: PUBLIC.id, redirect_uri: PUBLIC.redirectUri, code_challenge: challenge, code_challenge_method: 'S256' });
        const form = { grant_type: 'authorization_code', code: callback.get('code')!, redirect_uri: PUBLIC.redirectUri, code_verifier: verifier, client_id: PUBLIC.id };
        const res = await postFormFrom(from, `${host.origin}/oauth/token`, form);
        expect(res.status, `${from}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    },
  );

  it.each(adapters)(
    "RFC 6749 10.10: forms naming a confidential client without its secret (what a page on another site can make visitors' browsers send) are 401 and never counted on %s: the right secret from that address still works",
    async (adapter) => {
      const host = await sequentialHostOn(adapter, stores.open());
      const forms = [CONFIDENTIAL.id, SERVICE.id, 'no-such-client'].map((clientId) => ({ grant_type: 'client_credentials', client_id: clientId }));
      const named = await sequentially(ADDRESS_LIMIT + LIMIT, (i) => postFormFrom(LEGITIMATE, `${host.origin}/oauth/token`, forms[i % forms.length]!));
      expect(tally(named)).toEqual({ 401: ADDRESS_LIMIT + LIMIT });
      const right = await token(host, LEGITIMATE, { grant_type: 'client_credentials' }, basic(SERVICE.id, SERVICE.secret!));
      expect(right.status, JSON.stringify(right.body)).toBe(200);
    },
  );

  it.each(adapters)(
    "RFC 6749 10.10: Basic credentials a browser sends while navigating (a URL's user and password, from any site's page) are 401 and never counted on %s: the right secret from that address still works",
    async (adapter) => {
      const host = await sequentialHostOn(adapter, stores.open());
      const navigations = await sequentially(ADDRESS_LIMIT + LIMIT, (i) =>
        postFormFrom(LEGITIMATE, `${host.origin}/oauth/token`, { grant_type: 'client_credentials' }, { authorization: basic(i % 2 ? SERVICE.id : `made-up-${i}`, `${WRONG}-${i}`), 'sec-fetch-mode': 'navigate', origin: 'https://elsewhere.example' }),
      );
      expect(tally(navigations)).toEqual({ 401: ADDRESS_LIMIT + LIMIT });
      const right = await token(host, LEGITIMATE, { grant_type: 'client_credentials' }, basic(SERVICE.id, SERVICE.secret!));
      expect(right.status, JSON.stringify(right.body)).toBe(200);
    },
  );

  it.each(adapters)(
    'RFC 6749 10.10 / RFC 6585 4: 200 concurrent wrong secrets from one address on %s run exactly 10 secret checks; the rest get 429 with Retry-After',
    async (adapter) => {
      const host = await burstHostOn(adapter, stores.open());
      expect(tally(await concurrently(BURST, (i) => attempt(host, GUESSER, `${WRONG}-${i}`)))).toEqual({ 401: LIMIT, 429: BURST - LIMIT });
    },
  );

  it.each(adapters)(
    'RFC 6749 10.10: the right secret sent 30 times at once from its own address on %s, before the process remembers it, is answered every time: one check, never 429',
    async (adapter) => {
      const host = await burstHostOn(adapter, stores.open());
      // Authenticated every time (the grant is what fails): 400 invalid_grant.
      expect(tally(await concurrently(30, () => attempt(host, LEGITIMATE, CONFIDENTIAL.secret)))).toEqual({ 400: 30 });
    },
  );

  it('RFC 6749 10.10: one wrong secret sent 30 times at once is one guess, not thirty', async () => {
    const host = await burstHostOn('express', stores.open());
    // Thirty guesses would pass the limit of 10 within the burst itself.
    expect(tally(await concurrently(30, () => attempt(host, GUESSER, WRONG)))).toEqual({ 401: 30 });
    // One failure counted; a straggler that arrives after the first check settled starts a second.
    const rest = tally(await sequentially(LIMIT, (i) => attempt(host, GUESSER, `${WRONG}-${i}`)));
    expect(rest[401]).toBeGreaterThanOrEqual(LIMIT - 2);
    expect(rest[429]).toBeGreaterThanOrEqual(1);
  });

  if (spray) {
    it('RFC 6749 10.10: one address trying 150 client ids at once gets 100 secret checks, then 429 for any client; other addresses are not slowed', async () => {
      const host = await burstHostOn('koa', stores.open());
      const answers = await concurrently(150, (i) => attempt(host, GUESSER, WRONG, `unknown-client-${i}`));
      expect(tally(answers)).toEqual({ 401: ADDRESS_LIMIT, 429: 150 - ADDRESS_LIMIT });
      expect((await attempt(host, GUESSER, CONFIDENTIAL.secret)).status).toBe(429);
      // Authenticated (the grant is what fails): 400 invalid_grant.
      expect((await attempt(host, LEGITIMATE, CONFIDENTIAL.secret)).status).toBe(400);
    });
  }

  /** A host that takes the caller's address from a test header (the clientIp option): a secret for the confidential client sent as from `ip`. */
  const addressedHost = async (adapter: AdapterName) => {
    const host = await startHost(adapter, {
      oauth: { store: stores.open(), clients: await sequentialClients(), storeTimeoutMs: 30_000 },
      platform: { clientIp: (request) => header(request, 'x-test-ip') },
    });
    return (ip: string, secret: string) =>
      postFormFrom(GUESSER, `${host.origin}/oauth/token`, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(CONFIDENTIAL.id, secret), 'x-test-ip': ip });
  };

  it('RFC 6749 10.10: wrong secrets for one client id from 30 addresses (the clientIp option) each get their check, and lock nobody out', async () => {
    const from = await addressedHost('express');
    expect(tally(await concurrently(30, (i) => from(`203.0.113.${i}`, WRONG)))).toEqual({ 401: 30 });
    const right = await from('192.0.2.200', CONFIDENTIAL.secret);
    expect(right.status).toBe(400);
  });

  it('RFC 6749 10.10: IPv6 callers count by their /56 network: guesses from fresh addresses in one /56 are slowed, another /56 is answered', async () => {
    const from = await addressedHost('koa');
    expect(tally(await sequentially(LIMIT + 4, (i) => from(`2001:db8:0:1200:${i.toString(16)}::1`, WRONG)))).toEqual({ 401: LIMIT, 429: 4 });
    expect((await from('2001:db8:0:1300::1', CONFIDENTIAL.secret)).status).toBe(400);
  });

  it('RFC 6749 10.10: a guesser behind a NAT64 translator (RFC 6052 2.1) or a Teredo server (RFC 4380 4) is slowed alone: its neighbours sharing the /56 are answered', async () => {
    const from = await addressedHost('koa');
    const neighbours = [
      ['64:ff9b::198.51.100.7', '64:ff9b::198.51.100.8'],
      // Clients 192.0.2.45 and 192.0.2.46 of the Teredo server 65.54.227.120.
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:4136:e378:8000:63bf:3fff:fdd1'],
    ];
    for (const [guesser, neighbour] of neighbours) {
      expect(tally(await sequentially(LIMIT + 1, () => from(guesser!, WRONG)))).toEqual({ 401: LIMIT, 429: 1 });
      expect((await from(neighbour!, CONFIDENTIAL.secret)).status, neighbour).toBe(400);
    }
    // The translator's address for 198.51.100.7 and 198.51.100.7 itself are one caller.
    expect((await from('198.51.100.7', CONFIDENTIAL.secret)).status).toBe(429);
  });

  it('RFC 6749 2.3.1 / 5.2: 200 concurrent attempts with an unknown client id get the same answers: 10 checks, then 429', async () => {
    const host = await burstHostOn('koa', stores.open());
    expect(tally(await concurrently(BURST, (i) => attempt(host, GUESSER, `${WRONG}-${i}`, 'no-such-client')))).toEqual({ 401: LIMIT, 429: BURST - LIMIT });
  });

  it('RFC 6749 2.3.1 / 5.2: client ids no client can have (a NUL, other control characters, non-ASCII, 201 characters) are unknown clients: 401 invalid_client at the token, revocation and introspection endpoints, an error page at authorize, never a 503', async () => {
    const host = await sequentialHostOn('koa', stores.open());
    // PostgreSQL text cannot hold a NUL: asked for such an id, it answers an error, not "none".
    const ids = ['rp\u0000client', `${CONFIDENTIAL.id}\u0000`, 'rp\u007fclient', 'klïent', 'x'.repeat(201)];
    // Sent all at once: each is an unknown client's full-cost decoy check, and six per id and
    // thirty in all stay under both limits, so no answer depends on the order they arrive in.
    const paths = ['/oauth/token', '/oauth/revoke', '/oauth/introspect'];
    await Promise.all(
      ids.flatMap((id) => [
        ...paths.map(async (path) => {
          const basicAuth = await postFormFrom(GUESSER, `${host.origin}${path}`, { grant_type: 'refresh_token', refresh_token: 'x', token: 'x' }, { authorization: basic(id, WRONG) });
          expect(basicAuth.status, `${path} ${JSON.stringify(id)}: ${JSON.stringify(basicAuth.body)}`).toBe(401);
          expect(basicAuth.body.error).toBe('invalid_client');
        }),
        ...paths.map(async (path) => {
          const publicId = await postFormFrom(GUESSER, `${host.origin}${path}`, { grant_type: 'refresh_token', refresh_token: 'x', token: 'x', client_id: id });
          expect(publicId.status, `${path} ${JSON.stringify(id)}: ${JSON.stringify(publicId.body)}`).toBe(401);
        }),
        // An unknown client: an error page, never a redirect (RFC 6749 4.1.2.1).
        (async () => expectErrorPage(await host.authorize({ client_id: id }, { user: 'alice' })))(),
      ]),
    );
    // Authenticated (the grant is what fails): 400 invalid_grant.
    expect((await attempt(host, LEGITIMATE, CONFIDENTIAL.secret)).status).toBe(400);
  });

  it("RFC 6749 10.10: the real client's successes between guesses neither reset the guesser's count nor lock the real client out", async () => {
    const host = await sequentialHostOn('connect', stores.open());
    const guesses: Answer[] = [];
    const real: Answer[] = [];
    for (let i = 0; i < 30; i++) {
      guesses.push(await attempt(host, GUESSER, WRONG));
      real.push(await attempt(host, LEGITIMATE, CONFIDENTIAL.secret));
    }
    expect(tally(guesses)).toEqual({ 401: LIMIT, 429: 30 - LIMIT });
    // Authenticated every time (the grant is what fails).
    expect(real.map((res) => res.status)).toEqual(Array(30).fill(400));
  });

  it('RFC 6749 10.10: past the limit the right secret is a 429 too, even one this process verified a moment ago: the guesser learns nothing', async () => {
    const host = await sequentialHostOn('express', stores.open());
    // The real client authenticates first, so the process remembers its secret.
    expect((await attempt(host, LEGITIMATE, CONFIDENTIAL.secret)).status).toBe(400);
    expect(tally(await sequentially(LIMIT + 4, () => attempt(host, GUESSER, WRONG)))).toEqual({ 401: LIMIT, 429: 4 });
    expect((await attempt(host, GUESSER, CONFIDENTIAL.secret)).status).toBe(429);
    expect((await attempt(host, LEGITIMATE, CONFIDENTIAL.secret)).status).toBe(400);
  });

  it("RFC 6749 10.10: a caller's successes do not reset the failures of its own address across client ids", async () => {
    const host = await sequentialHostOn('express', stores.open(), { addressFailures: LIMIT });
    // At once: nine of the ten the address allows, each for a client id of its own.
    expect((await concurrently(LIMIT - 1, (i) => attempt(host, GUESSER, WRONG, `unknown-${i}`))).map((res) => res.status)).toEqual(Array(LIMIT - 1).fill(401));
    for (let i = 0; i < 3; i++) expect((await attempt(host, GUESSER, CONFIDENTIAL.secret)).status).toBe(400);
    expect((await attempt(host, GUESSER, WRONG, 'other-unknown')).status).toBe(401);
    expect((await attempt(host, GUESSER, WRONG, 'third-unknown')).status).toBe(429);
  });
}

describe('brute force on client authentication with the memory store', SLOW, () => {
  bruteForceSuite(memoryStores, ADAPTER_NAMES);

  afterEach(closeHosts);

  /** A memory store holding a confidential client of its own (configured clients never need the store). */
  const storeWithClient = async () => {
    const memory = createMemoryOAuthStore();
    const confidential = (await sequentialClients()).find((client) => client.id === CONFIDENTIAL.id)!;
    const stored = { ...confidential, id: 'stored-client', name: 'Stored', scopes: ['openid'], grants: ['authorization_code' as const, 'refresh_token' as const] };
    await memory.saveClient(stored);
    return { memory, stored };
  };

  it('a store failure while the client is looked up is a 503 (RFC 6749 5.2 temporarily_unavailable), not a failed authentication', async () => {
    const { memory, stored } = await storeWithClient();
    let failures = 0;
    const store: OAuthStore = { ...memory, getClient: (id) => (failures-- > 0 ? Promise.reject(new Error('store down')) : memory.getClient(id)) };
    const host = await sequentialHostOn('express', store);
    failures = LIMIT + 2;
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await attempt(host, GUESSER, CONFIDENTIAL.secret, stored.id);
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('temporarily_unavailable');
    }
    expect((await attempt(host, GUESSER, CONFIDENTIAL.secret, stored.id)).status).toBe(400);
  });

  it('RFC 6749 10.10: a wrong secret whose recheck against the store fails is a 503 that still counts: a guesser who meets an outage gets no free checks', async () => {
    const { memory, stored } = await storeWithClient();
    // After a wrong secret the record is read again, to see a rotation made through another process: that read fails.
    let rechecks = 0;
    const store: OAuthStore = {
      ...memory,
      getClient: (id) => (new Error().stack?.includes('verifyPresented') ? (rechecks++, Promise.reject(new Error('store down'))) : memory.getClient(id)),
    };
    const host = await sequentialHostOn('express', store);
    const answers: number[] = [];
    for (let i = 0; i < LIMIT + 2; i++) answers.push((await attempt(host, GUESSER, WRONG, stored.id)).status);
    // Each 503 compared a wrong secret before the store failed: LIMIT of them, then the address is refused.
    expect([answers, rechecks]).toEqual([[...Array<number>(LIMIT).fill(503), 429, 429], LIMIT]);
  });
});

describeRedis('brute force on client authentication while Redis fails the give-backs', SLOW, () => {
  afterEach(closeHosts);

  it('RFC 6749 10.10: the right secret is answered all the same, never a 503, and its count is given back once Redis takes it', async () => {
    const stores = redisStores();
    try {
      const direct = stores.client();
      let failGiveBacks = true;
      // Redis answers every script but the give-back, as after a failover that left the give-back's connection broken.
      const client = new Proxy(new Redis(process.env.REDIS_URL!), {
        get(target, name) {
          if (name === 'evalsha') {
            return (sha: string, keys: number, ...rest: string[]) =>
              failGiveBacks && sha === GIVE_BACK_FAILURE.sha ? Promise.reject(new Error('connection lost')) : target.evalsha(sha, keys, ...rest);
          }
          const value = Reflect.get(target, name, target) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const host = await sequentialHostOn('express', createRedisOAuthStore({ client, prefix: stores.prefix }));
      const held = async () => {
        const keys = await scanKeys(direct, `${stores.prefix}failures:*`);
        const windows = await Promise.all(keys.map(async (key) => ((await direct.type(key)) === 'set' ? direct.smembers(key) : [])));
        return new Set(windows.flat()).size;
      };
      // Past client authentication, the grant itself fails: 400 invalid_grant.
      expect((await attempt(host, LEGITIMATE, CONFIDENTIAL.secret)).status).toBe(400);
      expect(await held()).toBe(1);
      failGiveBacks = false;
      // The next call that reaches Redis ends the outage the failed give-back began (another
      // client's first authentication: the first one's secret is remembered and asks no store).
      expect((await attempt(host, LEGITIMATE, SERVICE.secret, SERVICE.id)).status).toBe(400);
      await vi.waitFor(async () => expect(await held()).toBe(0), { timeout: 10_000, interval: 100 });
      client.disconnect();
    } finally {
      await stores.close();
    }
  });
});

/** The adapters only carry requests to the same core: every adapter runs the suite with the memory store above. */
function sharedStoreSuite(makeStores: () => StoreFactory) {
  bruteForceSuite(makeStores, ['koa'], { spray: false });

  describe('two platform instances on one store (each with its own connection)', () => {
    let stores: StoreFactory;
    beforeEach(() => {
      stores = makeStores();
    });
    afterEach(async () => {
      await closeHosts();
      await stores.close();
    });

    it('RFC 6749 10.10: wrong secrets from one address sent to each in turn get exactly 10 checks between them; the right secret from another address is answered by both', async () => {
      const hosts = [await sequentialHostOn('express', stores.open()), await sequentialHostOn('koa', stores.open())];
      const guesses = await sequentially(30, (i) => attempt(hosts[i % 2]!, GUESSER, WRONG));
      expect(tally(guesses)).toEqual({ 401: LIMIT, 429: 30 - LIMIT });
      expect(guesses.slice(0, LIMIT).map((res) => res.status)).toEqual(Array(LIMIT).fill(401));
      for (const host of hosts) expect((await attempt(host, LEGITIMATE, CONFIDENTIAL.secret)).status).toBe(400);
    });

    it('RFC 6749 10.10 / RFC 6585 4: 200 concurrent wrong secrets from one address spread over both get exactly 10 checks between them', async () => {
      const hosts = [await burstHostOn('express', stores.open()), await burstHostOn('connect', stores.open())];
      expect(tally(await concurrently(BURST, (i) => attempt(hosts[i % 2]!, GUESSER, `${WRONG}-${i}`)))).toEqual({ 401: LIMIT, 429: BURST - LIMIT });
    });

    it('RFC 6749 10.10: 150 client ids tried at once from one address, spread over both, get 100 checks between them', async () => {
      const hosts = [await burstHostOn('express', stores.open()), await burstHostOn('koa', stores.open())];
      const spray = await concurrently(150, (i) => attempt(hosts[i % 2]!, GUESSER, WRONG, `unknown-client-${i}`));
      expect(tally(spray)).toEqual({ 401: ADDRESS_LIMIT, 429: 150 - ADDRESS_LIMIT });
      for (const host of hosts) {
        expect((await attempt(host, GUESSER, CONFIDENTIAL.secret)).status).toBe(429);
        // Authenticated (the grant is what fails): 400 invalid_grant.
        expect((await attempt(host, LEGITIMATE, CONFIDENTIAL.secret)).status).toBe(400);
      }
    });
  });
}

describeRedis('brute force on client authentication with the Redis store', SLOW, () => {
  sharedStoreSuite(redisStores);
});

describePostgres('brute force on client authentication with the PostgreSQL store', SLOW, () => {
  sharedStoreSuite(postgresStores);
});
