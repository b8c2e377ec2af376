/**
 * createLoginThrottle (docs/oauth.md#brute-force-limits): failed logins per address and user name,
 * and per address, on the memory, Redis and PostgreSQL stores, through broken connections too.
 *
 * Whole though past 350 lines: the Redis and PostgreSQL blocks share one suite and one set of
 * broken-connection helpers.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { oauthMigrationSql, createPostgresOAuthStore, createRedisOAuthStore, type PostgresOAuthStore } from '../../src/oauth/store/index.js';
import { createLoginThrottle, type LoginThrottle } from '../../src/oauth/login-throttle.js';
import { failureWindows } from '../../src/oauth/failure-windows.js';
import { Redis } from 'ioredis';
import pg from 'pg';
import { StoreTimeoutError } from '../../src/core/store-errors.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { hostPort, startTcpProxy, viaProxy, type ProxyDelay, type TcpProxy } from '../support/tcp-proxy.js';
import { memoryStores, postgresStores, redisStores, storesForEachTest, type StoreFactory } from './shared-stores.js';
import { scanKeys } from '../../src/core/redis-scan.js';

async function burst(logins: LoginThrottle[], count: number, username: string, ip: (i: number) => string) {
  const attempts = await Promise.all(Array.from({ length: count }, (_, i) => logins[i % logins.length]!.attempt(username, ip(i))));
  return { allowed: attempts.filter((a) => a.retryAfter === 0).length, waits: attempts.filter((a) => a.retryAfter > 0).map((a) => a.retryAfter) };
}

function loginThrottleSuite(makeStores: () => StoreFactory) {
  const stores = storesForEachTest(makeStores);
  const throttle = (failures: number, addressFailures?: number) => createLoginThrottle({ failures, addressFailures, windowSeconds: 60, store: stores().open() });

  it('failures for a user name from one address never stop the right password from another', async () => {
    const logins = throttle(3);
    for (let i = 0; i < 20; i++) await logins.attempt(i % 2 ? 'Demo' : 'demo', '127.0.0.9');
    const own = await logins.attempt('demo', '127.0.0.1');
    expect(own.retryAfter).toBe(0);
    await own.succeeded();
    expect((await logins.attempt('DEMO', '127.0.0.1')).retryAfter).toBe(0);
  });

  it('blocks the address that guesses at a user name, in any case, with the seconds to wait; its other user names still pass', async () => {
    const logins = throttle(3);
    for (let i = 0; i < 3; i++) expect((await logins.attempt(i === 1 ? 'Demo' : 'demo', '192.0.2.7')).retryAfter).toBe(0);
    const wait = (await logins.attempt('DEMO', '192.0.2.7')).retryAfter;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect((await logins.attempt('someone-else', '192.0.2.7')).retryAfter).toBe(0);
  });

  it('spellings of one user name a lookup would read alike (spaces, fullwidth letters, invisible characters) share its count', async () => {
    const logins = throttle(3);
    for (const spelling of [' demo', 'ｄｅｍｏ', 'de\u200bmo']) expect((await logins.attempt(spelling, '192.0.2.8')).retryAfter).toBe(0);
    expect((await logins.attempt('demo ', '192.0.2.8')).retryAfter).toBeGreaterThan(0);
    // A name that differs in more than its spelling is another name.
    expect((await logins.attempt('demo two', '192.0.2.8')).retryAfter).toBe(0);
    // Case forms that lower case alone keeps apart: ß and ss, a final sigma and a sigma.
    for (const spelling of ['straße', 'STRASSE']) expect((await logins.attempt(spelling, '192.0.2.10')).retryAfter).toBe(0);
    expect((await logins.attempt('Strasse', '192.0.2.10')).retryAfter).toBe(0);
    expect((await logins.attempt('strasse', '192.0.2.10')).retryAfter).toBeGreaterThan(0);
    for (const spelling of ['σας', 'σασ', 'ΣΑΣ']) expect((await logins.attempt(spelling, '192.0.2.11')).retryAfter).toBe(0);
    expect((await logins.attempt('Σας', '192.0.2.11')).retryAfter).toBeGreaterThan(0);
  });

  it('a user name of 256 KB of combining marks is counted at once, by its first 256 characters: names that share them share a count', async () => {
    const logins = throttle(3);
    const marks = 'a' + '\u0301\u0323'.repeat(64 * 1024);
    const started = performance.now();
    for (let i = 0; i < 3; i++) expect((await logins.attempt(`${marks}${i}`, '192.0.2.9')).retryAfter).toBe(0);
    expect((await logins.attempt(`${marks}x`, '192.0.2.9')).retryAfter).toBeGreaterThan(0);
    // Normalising the whole name took seconds; its first 256 characters take microseconds.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('blocks an address that tries many user names at the address limit, and only that address', async () => {
    const logins = throttle(3, 10);
    for (let i = 0; i < 10; i++) expect((await logins.attempt(`user${i}`, '192.0.2.8')).retryAfter).toBe(0);
    const wait = (await logins.attempt('someone-else', '192.0.2.8')).retryAfter;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect((await logins.attempt('someone-else', '192.0.2.9')).retryAfter).toBe(0);
  });

  it('counts an IPv6 address by its /56, and an IPv4-mapped or NAT64 address as its IPv4 address', async () => {
    const logins = throttle(2);
    // 2001:db8:0:1::1 and 2001:db8:0:ff::9 lie in one /56; 2001:db8:0:100:: starts the next.
    for (const ip of ['2001:db8:0:1::1', '2001:db8:0:ff::9']) expect((await logins.attempt('demo', ip)).retryAfter).toBe(0);
    expect((await logins.attempt('demo', '2001:db8:0:42::7')).retryAfter).toBeGreaterThan(0);
    expect((await logins.attempt('demo', '2001:db8:0:100::1')).retryAfter).toBe(0);
    for (let i = 0; i < 2; i++) await logins.attempt('demo', '192.0.2.10');
    expect((await logins.attempt('demo', '::ffff:192.0.2.10')).retryAfter).toBeGreaterThan(0);
    // RFC 6052 2.1: a NAT64 translator presents 192.0.2.10 as 64:ff9b::192.0.2.10, its neighbours beside it.
    expect((await logins.attempt('demo', '64:ff9b::192.0.2.10')).retryAfter).toBeGreaterThan(0);
    expect((await logins.attempt('demo', '64:ff9b::192.0.2.11')).retryAfter).toBe(0);
  });

  it('100 concurrent attempts at one user name from one address let exactly the limit check a password', async () => {
    const { allowed, waits } = await burst([throttle(5)], 100, 'demo', () => '198.18.0.1');
    expect(allowed).toBe(5);
    expect(waits).toHaveLength(95);
    for (const wait of waits) expect(wait).toBeGreaterThan(0);
  });

  it('100 concurrent attempts at many user names from one address let exactly the address limit check a password', async () => {
    const logins = throttle(5, 20);
    const attempts = await Promise.all(Array.from({ length: 100 }, (_, i) => logins.attempt(`user${i}`, '198.18.1.1')));
    expect(attempts.filter((a) => a.retryAfter === 0)).toHaveLength(20);
  });

  it('a successful login gives back its own attempt only: failures from the same address stay counted', async () => {
    const logins = throttle(3);
    for (let i = 0; i < 2; i++) expect((await logins.attempt('demo', '198.51.100.1')).retryAfter).toBe(0);
    for (let i = 0; i < 5; i++) {
      const own = await logins.attempt('demo', '198.51.100.1');
      expect(own.retryAfter).toBe(0);
      await own.succeeded();
    }
    expect((await logins.attempt('demo', '198.51.100.1')).retryAfter).toBe(0);
    expect((await logins.attempt('demo', '198.51.100.1')).retryAfter).toBeGreaterThan(0);
  });

  it('succeeded() on an attempt refused at the limit checked no password: it makes its address no known caller of the user', async () => {
    const logins = throttle(3);
    // 2001:db8:0:a1::9 fills the count of its /56 for demo; 2001:db8:0:a0::1 shares the /56.
    for (let i = 0; i < 3; i++) await logins.attempt('demo', '2001:db8:0:a1::9');
    const refused = await logins.attempt('demo', '2001:db8:0:a0::1');
    expect(refused.retryAfter).toBeGreaterThan(0);
    await refused.succeeded();
    expect((await logins.attempt('demo', '2001:db8:0:a0::1')).retryAfter).toBeGreaterThan(0);
  });

  it('succeeded() gives back the reservation once, however often it is called', async () => {
    const logins = throttle(2);
    await logins.attempt('demo', '198.51.100.1');
    const own = await logins.attempt('demo', '198.51.100.1');
    for (let i = 0; i < 3; i++) await own.succeeded();
    expect((await logins.attempt('demo', '198.51.100.1')).retryAfter).toBe(0);
    expect((await logins.attempt('demo', '198.51.100.1')).retryAfter).toBeGreaterThan(0);
  });
}

describe('createLoginThrottle: failed logins per address and user name, and per address, in memory', () => {
  loginThrottleSuite(memoryStores);

  it.each([42, undefined, ['demo', 'other'], { toLowerCase: () => 'demo' }])('throws an invalid_argument naming the user name for %j', async (username) => {
    const error: unknown = await createLoginThrottle().attempt(username as never, '192.0.2.1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ code: 'invalid_argument', field: 'username' });
    expect((error as ConfigurationError).message).toMatch(/username: must be a string \(LoginThrottle\.attempt\), got /);
  });

  it('throws an invalid_argument naming the IP when it is not a string', async () => {
    await expect(createLoginThrottle().attempt('demo', undefined as never)).rejects.toThrow(
      expect.objectContaining({ code: 'invalid_argument', field: 'ip', message: expect.stringMatching(/ip: must be a string .*got undefined/) }),
    );
  });

  it.each([
    [{ failures: 0 }, 'failures'],
    [{ failures: 2.5 }, 'failures'],
    [{ addressFailures: 0 }, 'addressFailures'],
    [{ addressFailures: '100' as never }, 'addressFailures'],
    [{ windowSeconds: -1 }, 'windowSeconds'],
    [{ knownCallerSeconds: 0 }, 'knownCallerSeconds'],
    [{ knownCallerSeconds: 1.5 }, 'knownCallerSeconds'],
  ])('refuses %j at creation, naming %s', (options, field) => {
    expect(() => createLoginThrottle(options)).toThrow(
      expect.objectContaining({ code: 'invalid_option', field, message: `courier-platform: ${field}: must be a positive integer (createLoginThrottle)` }),
    );
  });

  it('refuses a knownCallerSeconds past 30 days, as oauth.bruteForce.knownCallerSeconds; takes 30 days', () => {
    expect(() => createLoginThrottle({ knownCallerSeconds: 30 * 24 * 3600 + 1 })).toThrow(
      expect.objectContaining({ code: 'invalid_option', field: 'knownCallerSeconds', message: 'courier-platform: knownCallerSeconds: must be at most 2592000 (createLoginThrottle)' }),
    );
    expect(() => createLoginThrottle({ knownCallerSeconds: 30 * 24 * 3600 })).not.toThrow();
  });

  it('two instances in memory count apart: memory is per process', async () => {
    const stores = memoryStores();
    const [a, b] = [createLoginThrottle({ failures: 1, store: stores.open() }), createLoginThrottle({ failures: 1, store: stores.open() })];
    expect((await a.attempt('demo', '192.0.2.1')).retryAfter).toBe(0);
    expect((await b.attempt('demo', '192.0.2.1')).retryAfter).toBe(0);
  });
});

function sharedLoginSuite(makeStores: () => StoreFactory) {
  loginThrottleSuite(makeStores);

  it('two instances on one store, used in turn, share the counts per address and user name and per address', async () => {
    const stores = makeStores();
    try {
      const instances = [
        createLoginThrottle({ failures: 5, addressFailures: 8, store: stores.open() }),
        createLoginThrottle({ failures: 5, addressFailures: 8, store: stores.open() }),
      ];
      const pair: number[] = [];
      for (let i = 0; i < 12; i++) pair.push((await instances[i % 2]!.attempt('demo', '198.51.100.7')).retryAfter);
      expect(pair.map((wait) => wait > 0)).toEqual([...Array<boolean>(5).fill(false), ...Array<boolean>(7).fill(true)]);
      // The address has 5 failures: 3 more, whatever the user names, from either instance.
      const address: number[] = [];
      for (let i = 0; i < 6; i++) address.push((await instances[i % 2]!.attempt(`user${i}`, '198.51.100.7')).retryAfter);
      expect(address.map((wait) => wait > 0)).toEqual([false, false, false, true, true, true]);
    } finally {
      await stores.close();
    }
  });

  it('100 concurrent attempts spread over two instances on one store let exactly the limit through', async () => {
    const stores = makeStores();
    try {
      const instances = [createLoginThrottle({ failures: 5, store: stores.open() }), createLoginThrottle({ failures: 5, store: stores.open() })];
      expect((await burst(instances, 100, 'demo', () => '198.18.2.1')).allowed).toBe(5);
    } finally {
      await stores.close();
    }
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Twelve cuts at ~80 ms a round trip take 7 to 12 s on a loaded machine: the default 15 s leaves too little. */
const BROKEN_CONNECTIONS_TIMEOUT = 30_000;

/**
 * A user who signs in with the right password (limit 2) while the store's connections break at
 * varying points of the attempt: before a count left, after it landed but before its answer came
 * back (the answer is lost; a Redis client resends it after reconnecting), or during a give-back.
 * Whatever was lost, the user signs in once the store answers again, and nothing stays counted.
 */
async function signInThroughBrokenConnections(logins: LoginThrottle, proxy: TcpProxy, counted: () => Promise<number>, firstCutMs: number) {
  await (await logins.attempt('demo', '192.0.2.1')).succeeded();
  for (let i = 0; i < 12; i++) {
    const attempt = logins.attempt('demo', '192.0.2.1').then(
      (answered) => (answered.retryAfter === 0 ? answered.succeeded() : undefined),
      () => undefined,
    );
    // Every round trip takes 80 ms through the proxy: the cuts fall on different steps.
    await pause(firstCutMs + (i % 6) * 45);
    proxy.cut();
    await pause(10);
    proxy.resume();
    await attempt;
  }
  // The user tries again: the store answers, so what the breaks kept from being given back is given back.
  await vi.waitFor(
    async () => {
      const again = await logins.attempt('demo', '192.0.2.1');
      if (again.retryAfter === 0) await again.succeeded();
      expect(again.retryAfter).toBe(0);
    },
    { timeout: 10_000, interval: 200 },
  );
  await vi.waitFor(async () => expect(await counted()).toBe(0), { timeout: 5000, interval: 100 });
}

/**
 * A Redis client through a TCP proxy the test can stall or cut, keys under a prefix of the test's
 * own, and a direct connection to read them; `close` deletes the keys and stops everything.
 */
async function redisThroughProxy(label: string, retryMs: number, delay: ProxyDelay = {}) {
  const proxy = await startTcpProxy(hostPort(redisUrl!, 6379), delay);
  const client = new Redis(viaProxy(redisUrl!, proxy), { retryStrategy: () => retryMs, connectTimeout: 500 });
  client.on('error', () => {});
  const prefix = `${uniqueName(label)}:`;
  const direct = new Redis(redisUrl!);
  return {
    proxy,
    client,
    prefix,
    counted: () => loginAttemptsHeld(direct, prefix),
    async close() {
      client.disconnect();
      await proxy.close();
      const keys = await scanKeys(direct, `${prefix}*`);
      if (keys.length > 0) await direct.del(...keys);
      await direct.quit();
    },
  };
}

/** The attempts the login throttle's windows hold on Redis under `prefix`. */
async function loginAttemptsHeld(redis: Redis, prefix: string): Promise<number> {
  const keys = await scanKeys(redis, `${prefix}failures:login:*`);
  const sizes = await Promise.all(keys.map((key) => redis.scard(key)));
  return sizes.reduce((sum, size) => sum + size, 0);
}

describeRedis('createLoginThrottle on the Redis OAuth store', () => {
  sharedLoginSuite(redisStores);

  it('keeps its counts under the store prefix, for no longer than the window', async () => {
    const stores = redisStores();
    try {
      await createLoginThrottle({ windowSeconds: 60, store: stores.open() }).attempt('demo', '192.0.2.1');
      const keys = await scanKeys(stores.client(), `${stores.prefix}failures:login:*`);
      expect(keys).toHaveLength(2);
      // A give-back that finds nothing to give back is remembered for a window too.
      await failureWindows(stores.open(), 'login', 60_000).giveBack('never-counted', 'attempt-1');
      const given = await scanKeys(stores.client(), `${stores.prefix}given-back:login:*`);
      expect(given).toHaveLength(1);
      for (const key of [...keys, ...given]) {
        const ttl = await stores.client().pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
      }
    } finally {
      await stores.close();
    }
  });
  it('a user signing in through Redis connections that break mid-answer is never locked out: lost answers are given back, resent counts land once', async () => {
    const { proxy, client, prefix, counted, close } = await redisThroughProxy('login_lost', 20, { chunkMs: 40 });
    try {
      const logins = createLoginThrottle({ failures: 2, store: createRedisOAuthStore({ client, prefix }) });
      await signInThroughBrokenConnections(logins, proxy, counted, 60);
    } finally {
      await close();
    }
  }, BROKEN_CONNECTIONS_TIMEOUT);
  it('a Redis that answers every step slowly but within the 1 s deadline is slow, not down: attempts are counted, none times out (docs/stores.md#deadlines-and-outages)', async () => {
    // 600 ms a round trip: an attempt's four steps take 2.4 s, each well within its deadline.
    const { client, prefix, counted, close } = await redisThroughProxy('login_slow', 50, { chunkMs: 300 });
    try {
      await new Promise((resolve) => client.once('ready', resolve));
      const logins = createLoginThrottle({ failures: 5, store: createRedisOAuthStore({ client, prefix }) });
      for (const user of ['demo', 'other']) expect((await logins.attempt(user, '192.0.2.1')).retryAfter).toBe(0);
      expect(await counted()).toBe(4);
    } finally {
      await close();
    }
  });

  it('a Redis that stops answering (a partition, ioredis defaults as docs/deployment.md has them) rejects attempt() with a StoreTimeoutError at its deadline, never hangs, and counts again once it answers', async () => {
    const { proxy, client, prefix, close } = await redisThroughProxy('login_partition', 50);
    try {
      const logins = createLoginThrottle({ store: createRedisOAuthStore({ client, prefix }) });
      expect((await logins.attempt('demo', '192.0.2.1')).retryAfter).toBe(0);
      proxy.partition();
      const started = performance.now();
      // Bounded: without a deadline the attempt waits for as long as the partition lasts.
      const answer = await Promise.race([
        logins.attempt('demo', '192.0.2.2').then(
          () => 'counted',
          (error: unknown) => error,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5000).unref()),
      ]);
      expect(answer).toBeInstanceOf(StoreTimeoutError);
      // Twice the 1 s deadline of a store that answers nothing (docs/stores.md#deadlines-and-outages).
      expect(performance.now() - started).toBeLessThan(4000);
      proxy.resume();
      expect((await logins.attempt('demo', '192.0.2.3')).retryAfter).toBe(0);
    } finally {
      await close();
    }
  });
  it('succeeded() while Redis stops answering resolves all the same (the password was right, the login goes on), and gives the attempt back once Redis answers again', async () => {
    const { proxy, client, prefix, counted, close } = await redisThroughProxy('login_giveback', 50);
    try {
      const logins = createLoginThrottle({ failures: 1, addressFailures: 1, store: createRedisOAuthStore({ client, prefix }) });
      const attempt = await logins.attempt('demo', '192.0.2.1');
      expect([attempt.retryAfter, await counted()]).toEqual([0, 2]);
      proxy.partition();
      const started = performance.now();
      await expect(attempt.succeeded()).resolves.toBeUndefined();
      // The sign-in waits no longer than the attempt's 1 s deadline (docs/stores.md#deadlines-and-outages).
      expect(performance.now() - started).toBeLessThan(1800);
      proxy.resume();
      await vi.waitFor(async () => expect(await counted()).toBe(0), { timeout: 8000, interval: 100 });
      // A right password is no failure: with a limit of 1 the same user still gets to try.
      expect((await logins.attempt('demo', '192.0.2.1')).retryAfter).toBe(0);
    } finally {
      await close();
    }
  });
});

describePostgres('createLoginThrottle on the PostgreSQL OAuth store', () => {
  sharedLoginSuite(postgresStores);

  it("keeps its counts in the store's schema, table oauth_failure_windows", async () => {
    const stores = postgresStores();
    try {
      await createLoginThrottle({ store: stores.open() }).attempt('demo', '192.0.2.1');
      const { rows } = await stores.pool().query('SELECT count(*)::int AS n FROM "' + stores.schema + '".oauth_failure_windows');
      expect(rows[0].n).toBe(2);
    } finally {
      await stores.close();
    }
  });

  it('the rows of windows emptied by successful logins and of ended windows go with the store\'s own expired rows, and the ids given back once forgotten', async () => {
    let clock = Date.now();
    const stores = postgresStores({ now: () => clock });
    const rows = async (table: string) => (await stores.pool().query(`SELECT count(*)::int AS n FROM "${stores.schema}".${table}`)).rows[0].n;
    try {
      const store = stores.open() as PostgresOAuthStore;
      const logins = createLoginThrottle({ windowSeconds: 60, store });
      for (let i = 0; i < 20; i++) await (await logins.attempt(`user-${i}`, `192.0.2.${i}`)).succeeded();
      // Their windows are empty; their give-backs are remembered for a window (a copy of their counts arriving late counts nothing): two keys each.
      await store.deleteExpired();
      expect([await rows('oauth_failure_windows'), await rows('oauth_given_back')]).toEqual([0, 40]);
      await logins.attempt('guessed', '192.0.2.99'); // a wrong password: its two counts stay
      // A give-back that finds nothing to give back is remembered for a window too.
      await failureWindows(store, 'login', 60_000).giveBack('never-counted', 'attempt-1');
      await store.deleteExpired();
      expect([await rows('oauth_failure_windows'), await rows('oauth_given_back')]).toEqual([2, 41]);
      clock += 61_000;
      await store.deleteExpired();
      expect([await rows('oauth_failure_windows'), await rows('oauth_given_back')]).toEqual([0, 0]);
    } finally {
      await stores.close();
    }
  });

  it('a user signing in through PostgreSQL connections that break mid-answer is never locked out: lost answers are given back', async () => {
    const stores = postgresStores();
    const proxy = await startTcpProxy(hostPort(databaseUrl!, 5432), { chunkMs: 40 });
    const pool = new pg.Pool({ connectionString: viaProxy(databaseUrl!, proxy), max: 2, connectionTimeoutMillis: 500 });
    pool.on('error', () => {});
    try {
      await createPostgresOAuthStore({ pool: stores.pool(), schema: stores.schema }).migrate();
      const counted = async () => {
        const { rows } = await stores.pool().query(`SELECT coalesce(sum(cardinality(ids)), 0)::int AS n FROM "${stores.schema}".oauth_failure_windows`);
        return rows[0].n as number;
      };
      const logins = createLoginThrottle({ failures: 2, store: createPostgresOAuthStore({ pool, schema: stores.schema }) });
      // A new connection's handshake takes a few round trips first.
      await signInThroughBrokenConnections(logins, proxy, counted, 300);
    } finally {
      await pool.end().catch(() => undefined);
      await proxy.close();
      await stores.close();
    }
  }, BROKEN_CONNECTIONS_TIMEOUT);

  it('a count that misses its deadline while PostgreSQL stalls, and that the store makes later, is given back once it answers: the stall locks nobody out', async () => {
    const stores = postgresStores();
    const locker = new pg.Client({ connectionString: databaseUrl });
    try {
      const logins = createLoginThrottle({ failures: 1, addressFailures: 1, store: stores.open() });
      await (await logins.attempt('demo', '192.0.2.1')).succeeded();
      // The store stalls: the windows' table is locked against writes, so a count waits while every read still answers.
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${stores.schema}".oauth_failure_windows IN EXCLUSIVE MODE`);
      // A store silent for twice the 1 s deadline (docs/stores.md#deadlines-and-outages).
      await expect(logins.attempt('demo', '192.0.2.1')).rejects.toBeInstanceOf(StoreTimeoutError);
      // The store answers again, and makes the count nobody waits for any more.
      await locker.query('COMMIT');
      // Locking the rows in turn waits for that count to land, then reads what it left.
      const counted = async () => {
        const { rows } = await stores.pool().query(`SELECT cardinality(ids) AS n FROM "${stores.schema}".oauth_failure_windows FOR UPDATE`);
        return rows.filter((row: { n: number }) => row.n > 0).length;
      };
      for (let i = 0; i < 30 && (await counted()) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));

      // Nobody was answered for the stalled attempt: it is no failed login.
      expect((await logins.attempt('demo', '192.0.2.1')).retryAfter).toBe(0);
    } finally {
      await locker.end().catch(() => undefined);
      await stores.close();
    }
  });

  it("with migrate: false it creates nothing; the store's migration (migrate() or oauthMigrationSql()) makes the table it counts in", async () => {
    const stores = postgresStores({ migrate: false });
    try {
      const logins = createLoginThrottle({ failures: 1, store: stores.open() });
      await expect(logins.attempt('demo', '192.0.2.1')).rejects.toThrow(/does not exist/);
      await stores.pool().query(oauthMigrationSql({ schema: stores.schema }));
      expect((await logins.attempt('demo', '192.0.2.1')).retryAfter).toBe(0);
      expect((await logins.attempt('demo', '192.0.2.1')).retryAfter).toBeGreaterThan(0);
    } finally {
      await stores.close();
    }
  });
});
