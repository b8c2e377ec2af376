/**
 * Memory, Redis and PostgreSQL behave the same (docs/stores.md): one conformance suite per
 * store, then what is particular to each store.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import {
  CONSUME_SCRIPT_SHA,
  createMemoryQuotaStore,
  createPostgresQuotaStore,
  createQuotaService,
  createRedisQuotaStore,
  quotaMigrationSql,
  type QuotaBucket,
  type RedisLike,
} from '../../src/quota/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { describeQuotaStoreConformance } from './store-conformance.js';

// ---------------------------------------------------------------------------------------------
// helpers

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  for (let i = 0; i < 10_000; i++) {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
    if (cursor === '0') return keys;
  }
  throw new Error('SCAN did not finish');
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await scanKeys(redis, `{${prefix}:*`);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
}

function newRedis(): Redis {
  return new Redis(redisUrl as string, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false });
}

function newPool(max = 5): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {}); // an idle connection that breaks is simply replaced
  return pool;
}

async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

const buckets = (now: number, limit: number): QuotaBucket[] => [
  { period: 'minute', start: now - (now % 60_000), end: now - (now % 60_000) + 60_000, limit },
];

// ---------------------------------------------------------------------------------------------
// the one suite, three stores

describeQuotaStoreConformance({
  name: 'memory',
  create: () => {
    const store = createMemoryQuotaStore();
    return { store, teardown: () => store.close() };
  },
});

describeQuotaStoreConformance({
  name: 'redis',
  suite: describeRedis,
  create: () => {
    const redis = newRedis();
    const prefix = uniqueName('quota');
    const store = createRedisQuotaStore({ client: redis, prefix });
    return {
      store,
      async teardown() {
        await deleteKeys(redis, prefix);
        await redis.quit();
      },
    };
  },
});

describeQuotaStoreConformance({
  name: 'postgres',
  suite: describePostgres,
  create: () => {
    const pool = newPool();
    const schema = uniqueName('quota');
    const store = createPostgresQuotaStore({ pool, schema });
    return {
      store,
      async teardown() {
        await store.close();
        await dropSchema(pool, schema);
        await pool.end();
      },
    };
  },
});

// ---------------------------------------------------------------------------------------------
// memory

describe('memory quota store', () => {
  it('drops a counter once its bucket ended plus the grace, by timestamp (no timers)', async () => {
    const store = createMemoryQuotaStore({ expiryGraceMs: 100 });
    const bucket: QuotaBucket = { period: 'minute', start: 0, end: 1000, limit: 5 };
    expect(await store.consume({ clientId: 'a', apiPath: '/x', cost: 2, buckets: [bucket], now: 500 })).toEqual({ admitted: true, used: [2] });
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: [bucket], now: 999 })).toEqual([2]);
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: [bucket], now: 1099 })).toEqual([2]);
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: [bucket], now: 1100 })).toEqual([0]);
    expect(store.size).toBe(0);
    // a month-long window is just a number: nothing waits 2^31 ms
    const month: QuotaBucket = { period: 'month', start: 0, end: 31 * 86_400_000, limit: 0 };
    expect(await store.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: [month], now: 30 * 86_400_000 })).toEqual({ admitted: true, used: [1] });
  });

  it('sweeps expired counters as calls go by, so memory stays bounded', async () => {
    const store = createMemoryQuotaStore();
    let now = Date.UTC(2026, 0, 10, 12);
    const quota = createQuotaService({ store, now: () => now, logger: silentLogger });
    for (let i = 0; i < 1000; i++) await quota.consume(`client-${i}`, '/openapi/v1/orders');
    expect(store.size).toBe(3000);
    now = Date.UTC(2026, 2, 10, 12); // two months on: every one of those buckets has ended
    for (let i = 0; i < 400; i++) await quota.consume('still-active', '/openapi/v1/orders');
    // 400 calls examined 3 200 slots, the 1 000 old ones among them: every expired counter is gone, the live three remain
    expect(store.size).toBe(3);
    const again = await quota.inspect('still-active', '/openapi/v1/orders');
    expect(again.outcome === 'ok' && again.report.periods.map((p) => p.used)).toEqual([60, 60, 60]);
  });

  it('never lets one client and path share counters with another pair that spells the same', async () => {
    const store = createMemoryQuotaStore();
    const one = { clientId: 'b/c', apiPath: '/a', cost: 1, buckets: buckets(0, 1), now: 0 };
    const other = { clientId: 'c', apiPath: '/ab/', cost: 1, buckets: buckets(0, 1), now: 0 };
    expect(await store.consume(one)).toEqual({ admitted: true, used: [1] });
    expect(await store.consume(other)).toEqual({ admitted: true, used: [1] });
    expect(await store.consume(one)).toEqual({ admitted: false, used: [1] });
  });

  it('keeps the count of a past bucket when the clock steps back into it', async () => {
    const store = createMemoryQuotaStore();
    const at = (now: number) => ({ clientId: 'a', apiPath: '/x', cost: 1, buckets: buckets(now, 2), now });
    expect(await store.consume(at(59_900))).toEqual({ admitted: true, used: [1] });
    expect(await store.consume(at(60_100))).toEqual({ admitted: true, used: [1] }); // the next minute
    // NTP steps the clock back 300 ms: the first minute still holds its one call
    expect(await store.consume(at(59_800))).toEqual({ admitted: true, used: [2] });
    expect(await store.consume(at(59_850))).toEqual({ admitted: false, used: [2] });
    expect(await store.consume(at(60_200))).toEqual({ admitted: true, used: [2] });
  });

  it('sweeps everything on demand', async () => {
    const store = createMemoryQuotaStore();
    for (let i = 0; i < 10; i++) await store.consume({ clientId: `c${i}`, apiPath: '/x', cost: 1, buckets: buckets(0, 0), now: 0 });
    expect(store.size).toBe(10);
    expect(store.sweep(60_000 + 4_999)).toBe(0); // within the grace
    expect(store.sweep(60_000 + 5_000)).toBe(10);
    expect(store.size).toBe(0);
  });

  it('refuses a malformed request instead of counting it', async () => {
    const store = createMemoryQuotaStore();
    await expect(store.consume({ clientId: 'a', apiPath: '/x', cost: -1, buckets: buckets(0, 1), now: 0 })).rejects.toThrow(TypeError);
    await expect(
      store.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: [...buckets(0, 1), ...buckets(0, 1)], now: 0 }),
    ).rejects.toThrow(/twice/);
    expect(store.size).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Redis

/** The commands of RedisLike the quota store never sends (the OAuth store does): a call fails the test. */
const NOT_SENT_BY_QUOTA = {
  get: () => Promise.reject(new Error('the quota store sent GET')),
  set: () => Promise.reject(new Error('the quota store sent SET')),
  hmget: () => Promise.reject(new Error('the quota store sent HMGET')),
  hset: () => Promise.reject(new Error('the quota store sent HSET')),
  hgetall: () => Promise.reject(new Error('the quota store sent HGETALL')),
  hdel: () => Promise.reject(new Error('the quota store sent HDEL')),
};

describe('redis quota store, with a recording client', () => {
  type Batch = (size: number) => Promise<[Error | null, unknown][] | null>;
  /**
   * Admits every call sent alone and records its keys; with `batch`, also has a pipeline that
   * answers each batch with `batch(size)` and records the batch sizes.
   */
  function recordingClient(batch?: Batch, extra: Pick<RedisLike, 'isCluster'> = {}) {
    const log = { alone: [] as string[][], batches: [] as number[] };
    const client: RedisLike = {
      ...NOT_SENT_BY_QUOTA,
      evalsha: async (_sha, numkeys, ...args) => {
        log.alone.push(args.slice(0, numkeys).map(String));
        return [1, ...Array.from({ length: numkeys }, () => 1)];
      },
      eval: async () => {
        throw new Error('not used');
      },
      mget: async () => [],
      ...(batch && {
        pipeline: () => {
          let size = 0;
          return {
            evalsha: () => size++,
            exec: () => {
              log.batches.push(size);
              return batch(size);
            },
          };
        },
      }),
      ...extra,
    };
    /** How many calls went alone, and the size of each batch. */
    const counts = () => ({ alone: log.alone.length, batches: log.batches });
    return { client, log, counts };
  }

  it('keeps counting every client and path right after more than 10 000 of them (the remembered keys are bounded)', async () => {
    const { client, log } = recordingClient();
    const sent = log.alone;
    const store = createRedisQuotaStore({ client });
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const consume = (clientId: string, apiPath: string, at: number) => store.consume({ clientId, apiPath, cost: 1, buckets: buckets(at, 5), now: at });
    await consume('first', '/a', now);
    for (let i = 0; i < 10_001; i++) await consume(`c${i}`, '/a', now);
    await consume('first', '/a', now);
    await consume('first', '/a', now + 60_000); // the next minute: a new key
    const expected = (at: number) => store.keysFor('first', '/a', buckets(at, 5));
    expect(sent[0]).toEqual(expected(now));
    expect(sent.at(-2)).toEqual(expected(now));
    expect(sent.at(-1)).toEqual(expected(now + 60_000));
    expect(sent.at(-1)).not.toEqual(sent.at(-2));
    expect(sent[1]).toEqual(store.keysFor('c0', '/a', buckets(now, 5)));
  });

  const oneCall = (store: ReturnType<typeof createRedisQuotaStore>, clientId: string) => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    return store.consume({ clientId, apiPath: '/a', cost: 1, buckets: buckets(now, 5), now });
  };

  it('gives each call of a batch its own answer: one failed call fails alone, a failed batch fails every call', async () => {
    let failWhole = false;
    const { client, log, counts } = recordingClient(async (size) => {
      if (failWhole) throw new Error('Connection is closed.');
      return Array.from({ length: size }, (_, i): [Error | null, unknown] => (i === 1 ? [new Error('ERR something broke'), null] : [null, [1, i + 1]]));
    });
    const store = createRedisQuotaStore({ client });
    const settled = await Promise.allSettled([oneCall(store, 'a'), oneCall(store, 'b'), oneCall(store, 'c')]);
    expect(counts()).toEqual({ alone: 0, batches: [3] });
    expect(settled[0]).toEqual({ status: 'fulfilled', value: { admitted: true, used: [1] } });
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { message: 'ERR something broke' } });
    expect(settled[2]).toEqual({ status: 'fulfilled', value: { admitted: true, used: [3] } });

    failWhole = true;
    const failed = await Promise.allSettled([oneCall(store, 'a'), oneCall(store, 'b')]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(log.batches).toEqual([3, 2]);
  });

  it('sends a call that arrives alone as a plain EVALSHA, and never batches on a Cluster (one slot per pipeline)', async () => {
    const answer = async (size: number) => Array.from({ length: size }, (): [Error | null, unknown] => [null, [1, 1]]);
    const single = recordingClient(answer);
    await oneCall(createRedisQuotaStore({ client: single.client }), 'a');
    expect(single.counts()).toEqual({ alone: 1, batches: [] });

    const cluster = recordingClient(answer, { isCluster: true });
    const store = createRedisQuotaStore({ client: cluster.client });
    await Promise.all([oneCall(store, 'a'), oneCall(store, 'b'), oneCall(store, 'c')]);
    expect(cluster.counts()).toEqual({ alone: 3, batches: [] });
  });
});

describeRedis('redis quota store', () => {
  let redis: Redis;
  const prefix = uniqueName('quota_redis');
  beforeAll(() => {
    redis = newRedis();
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  /** Counts every command method called through it. */
  function counting(client: Redis): { client: RedisLike; calls: Map<string, number> } {
    const calls = new Map<string, number>();
    const proxy = new Proxy(client, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function' || typeof property !== 'string') return value;
        return (...args: unknown[]) => {
          calls.set(property, (calls.get(property) ?? 0) + 1);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { client: proxy as unknown as RedisLike, calls };
  }

  it('sends exactly one EVALSHA per consume, and reads the stored rules once per client and path per rule-cache period', async () => {
    const { client, calls } = counting(redis);
    let now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const quota = createQuotaService({ store: createRedisQuotaStore({ client, prefix }), now: () => now, logger: silentLogger });
    await quota.consume('counted', '/openapi/v1/orders'); // may load the script (NOSCRIPT, then EVAL) on a fresh server
    calls.clear();
    for (let i = 0; i < 5; i++) {
      now += 900;
      expect((await quota.consume('counted', '/openapi/v1/orders')).outcome).toBe('admitted');
    }
    expect(Object.fromEntries(calls)).toEqual({ evalsha: 5 });
    now += 1000; // past the rule cache's 5 s
    expect((await quota.consume('counted', '/openapi/v1/orders')).outcome).toBe('admitted');
    expect(Object.fromEntries(calls)).toEqual({ evalsha: 6, hmget: 1 });
  });

  it('sends the calls that arrive together in one write, each its own EVALSHA with its own answer, admitting exactly the limit', async () => {
    const own = newRedis();
    try {
      await own.ping();
      const store = createRedisQuotaStore({ client: own, prefix });
      const now = Date.UTC(2026, 10, 21, 10, 0, 0);
      const call = () => store.consume({ clientId: 'together', apiPath: '/x', cost: 1, buckets: buckets(now, 30), now });
      await call(); // loads the script if this server has not seen it yet
      const stream = (own as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
      const write = stream.write;
      let writes = 0;
      stream.write = function counted(this: unknown, ...args: unknown[]) {
        writes++;
        return write.apply(this, args);
      };
      const results = await Promise.all(Array.from({ length: 50 }, call)).finally(() => {
        stream.write = write;
      });
      expect(writes).toBe(1);
      const admitted = results.filter((r) => r.admitted);
      expect(admitted).toHaveLength(29);
      // Each admitted call saw its own count, as if it had gone alone.
      expect(admitted.map((r) => r.used[0]).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 29 }, (_, i) => i + 2));
      expect(results.filter((r) => !r.admitted).every((r) => r.used[0] === 30)).toBe(true);
      expect(await own.get(store.keysFor('together', '/x', buckets(now, 30))[0]!)).toBe('30');
    } finally {
      own.disconnect();
    }
  });

  it('repeats each call of a batch with EVAL when the server answers NOSCRIPT, e.g. after a restart', async () => {
    const client: RedisLike = {
      ...NOT_SENT_BY_QUOTA,
      evalsha: (sha, numkeys, ...args) => redis.evalsha(sha, numkeys, ...args),
      eval: (script, numkeys, ...args) => redis.eval(script, numkeys, ...args),
      mget: (...keys) => redis.mget(...keys),
      // A server that does not know the script: every EVALSHA of the pipeline names a script it never saw.
      pipeline: () => {
        const pipeline = redis.pipeline();
        return { evalsha: (_sha, numkeys, ...args) => pipeline.evalsha('0'.repeat(40), numkeys, ...args), exec: () => pipeline.exec() };
      },
    };
    const store = createRedisQuotaStore({ client, prefix });
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = () => store.consume({ clientId: 'noscript-batch', apiPath: '/x', cost: 1, buckets: buckets(now, 3), now });
    const results = await Promise.all([call(), call(), call(), call()]);
    expect(results.map((r) => r.admitted).sort()).toEqual([false, true, true, true]);
    expect(await redis.get(store.keysFor('noscript-batch', '/x', buckets(now, 3))[0]!)).toBe('3');
  });

  it('falls back to EVAL once when the server does not know the script (NOSCRIPT)', async () => {
    let refusals = 0;
    const calls: string[] = [];
    const client: RedisLike = {
      ...NOT_SENT_BY_QUOTA,
      async evalsha(sha, numkeys, ...args) {
        calls.push('evalsha');
        expect(sha).toBe(CONSUME_SCRIPT_SHA);
        if (refusals++ === 0) throw new Error('NOSCRIPT No matching script. Please use EVAL.');
        return redis.evalsha(sha, numkeys, ...args);
      },
      async eval(script, numkeys, ...args) {
        calls.push('eval');
        return redis.eval(script, numkeys, ...args);
      },
      mget: (...keys) => redis.mget(...keys),
    };
    const store = createRedisQuotaStore({ client, prefix });
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    expect(await store.consume({ clientId: 'noscript', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now })).toEqual({ admitted: true, used: [1] });
    expect(await store.consume({ clientId: 'noscript', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now })).toEqual({ admitted: true, used: [2] });
    expect(calls).toEqual(['evalsha', 'eval', 'evalsha']);
  });

  it('puts all keys of one call under one hash tag, each expiring at its bucket end (plus the grace)', async () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 20);
    const store = createRedisQuotaStore({ client: redis, prefix, expiryGraceMs: 5000 });
    const quota = createQuotaService({ store, now: () => now, logger: silentLogger });
    const clientId = 'tag:{odd}/client';
    const decision = await quota.consume(clientId, '/openapi/v1/orders');
    expect(decision.outcome).toBe('admitted');
    const keys = await scanKeys(redis, `{${prefix}:${encodeURIComponent(clientId)}:*`);
    expect(keys).toHaveLength(3);
    const tags = new Set(keys.map((key) => /^\{[^}]*\}/.exec(key)?.[0]));
    expect(tags.size).toBe(1);
    expect([...tags][0]).toBe(`{${prefix}:${encodeURIComponent(clientId)}:/openapi/v1/orders}`);
    const ends = { minute: Date.UTC(2026, 10, 21, 10, 1), day: Date.UTC(2026, 10, 22), month: Date.UTC(2026, 11, 1) };
    for (const [period, end] of Object.entries(ends)) {
      const key = keys.find((k) => k.includes(`}:${period}:`)) as string;
      const ttl = await redis.pttl(key);
      const expected = end - now + 5000;
      expect(ttl, `${period} ttl`).toBeLessThanOrEqual(expected);
      expect(ttl, `${period} ttl`).toBeGreaterThan(expected - 2000);
    }
  });

  it('a call one period rejects leaves every counter as it was, and no key without its TTL', async () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 20);
    const store = createRedisQuotaStore({ client: redis, prefix, expiryGraceMs: 5000 });
    const minute: QuotaBucket = { period: 'minute', start: Date.UTC(2026, 10, 21, 10, 0), end: Date.UTC(2026, 10, 21, 10, 1), limit: 0 };
    const day: QuotaBucket = { period: 'day', start: Date.UTC(2026, 10, 21), end: Date.UTC(2026, 10, 22), limit: 2 };
    const call = (cost: number) => store.consume({ clientId: 'undo', apiPath: '/x', cost, buckets: [minute, day], now });
    expect(await call(3)).toEqual({ admitted: false, used: [0, 0] }); // the day has no room: nothing charged, even where the key was new
    expect(await call(2)).toEqual({ admitted: true, used: [2, 2] });
    expect(await call(1)).toEqual({ admitted: false, used: [2, 2] });
    for (const key of store.keysFor('undo', '/x', [minute, day])) {
      expect(await redis.get(key)).toBe('2');
      expect(await redis.pttl(key), key).toBeGreaterThan(0);
    }
  });

  it('rejects a client that is not ioredis-like, and a prefix with braces', () => {
    expect(() => createRedisQuotaStore({ client: {} as RedisLike })).toThrow(expect.objectContaining({ code: 'invalid_option', field: 'client' }));
    expect(() => createRedisQuotaStore({ client: redis, prefix: 'a{b' })).toThrow(expect.objectContaining({ code: 'invalid_option', field: 'prefix' }));
  });

  it('a reply of the consume script it cannot read is a store_failed (StoreFailedError)', async () => {
    const odd = { evalsha: async () => 'OK', eval: async () => 'OK', mget: async () => [] } as unknown as RedisLike;
    const store = createRedisQuotaStore({ client: odd });
    await expect(store.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: buckets(0, 1), now: 0 })).rejects.toThrow(
      expect.objectContaining({ name: 'StoreFailedError', code: 'store_failed', message: expect.stringContaining('unexpected reply') }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL

describePostgres('postgres quota store', () => {
  let pool: pg.Pool;
  const schemas: string[] = [];
  const freshSchema = (): string => {
    const schema = uniqueName('quota_pg');
    schemas.push(schema);
    return schema;
  };
  beforeAll(() => {
    pool = newPool(10);
  });
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  const tableExists = async (schema: string): Promise<boolean> => {
    const { rows } = await pool.query('SELECT to_regclass($1) AS t', [`"${schema}".courier_quota_counter`]);
    return rows[0]?.t !== null;
  };

  it('migrates idempotently, and concurrently from many processes without a conflict', async () => {
    const schema = freshSchema();
    const stores = Array.from({ length: 6 }, () => createPostgresQuotaStore({ pool, schema }));
    await Promise.all(stores.map((store) => store.migrate()));
    await stores[0]!.migrate();
    await stores[0]!.migrate();
    expect(await tableExists(schema)).toBe(true);
  });

  it('migrates on first use unless told not to; the published SQL creates the same table', async () => {
    const schema = freshSchema();
    const now = Date.UTC(2026, 10, 21, 10);
    const manual = createPostgresQuotaStore({ pool, schema, migrate: false });
    await expect(manual.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now })).rejects.toThrow(/does not exist/);
    expect(await tableExists(schema)).toBe(false);
    await pool.query(quotaMigrationSql({ schema }));
    await pool.query(quotaMigrationSql({ schema })); // idempotent too
    expect(await manual.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now })).toEqual({ admitted: true, used: [1] });

    const automatic = freshSchema();
    const store = createPostgresQuotaStore({ pool, schema: automatic });
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: buckets(now, 5), now })).toEqual([0]);
    expect(await tableExists(automatic)).toBe(true);
  });

  it('deletes expired rows on demand and opportunistically, never the live ones', async () => {
    const schema = freshSchema();
    const store = createPostgresQuotaStore({ pool, schema, cleanupIntervalMs: 1, cleanupBatchSize: 2, expiryGraceMs: 0 });
    let now = Date.UTC(2026, 0, 10, 12);
    const quota = createQuotaService({ store, now: () => now, logger: silentLogger });
    for (const id of ['a', 'b', 'c']) await quota.consume(id, '/openapi/v1/orders'); // 9 rows, 3 per client
    const rows = async (): Promise<number> => Number((await pool.query(`SELECT count(*)::int AS n FROM ${store.tableName}`)).rows[0].n);
    await store.close();
    expect(await rows()).toBe(9);
    // a day later, the minute and day rows have ended, the January rows have not
    now = Date.UTC(2026, 0, 11, 12);
    expect(await store.deleteExpired(now)).toBe(6);
    expect(await rows()).toBe(3);
    // in March every January row has ended: the next consume cleans up a batch by itself
    now = Date.UTC(2026, 2, 1, 12);
    await quota.consume('d', '/openapi/v1/orders');
    await store.close(); // waits for the clean-up in flight
    expect(await rows()).toBe(3 + 3 - 2);
    expect(await store.deleteExpired(now)).toBe(1);
    expect(await rows()).toBe(3);
    const still = await quota.inspect('d', '/openapi/v1/orders');
    expect(still.outcome === 'ok' && still.report.periods.map((p) => p.used)).toEqual([1, 1, 1]);
  });

  it('gives up on a counter row another connection holds for too long (lock_timeout), failing every call of the batch, instead of hanging', async () => {
    const schema = freshSchema();
    const store = createPostgresQuotaStore({ pool, schema, lockTimeoutMs: 200 });
    const now = Date.UTC(2026, 10, 21, 10);
    const quota = createQuotaService({ store, now: () => now, logger: silentLogger, onStoreError: 'closed', storeTimeoutMs: 5000 });
    expect((await quota.consume('held', '/openapi/v1/orders')).outcome).toBe('admitted');
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT used FROM ${store.tableName} WHERE client_id = 'held' FOR UPDATE`);
      const started = performance.now();
      const blocked = await Promise.all([1, 2, 3].map(() => quota.consume('held', '/openapi/v1/orders')));
      for (const decision of blocked) {
        expect(decision.outcome).toBe('store_unavailable');
        expect(decision.outcome === 'store_unavailable' && decision.error.message).toMatch(/lock timeout/);
      }
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const after = await quota.consume('held', '/openapi/v1/orders');
    expect(after.outcome === 'admitted' && after.periods.map((p) => p.used)).toEqual([2, 2, 2]);
  });

  /** The pool, counting the consume statements it runs. */
  function countingPool(): { pool: pg.Pool; statements: () => number } {
    let statements = 0;
    const counted = new Proxy(pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return (text: string, values?: unknown[]) => {
          if (/_consume"\(/.test(text)) statements++;
          return target.query(text, values);
        };
      },
    });
    return { pool: counted, statements: () => statements };
  }

  it('sends the calls of one turn for one client and path as one statement, admitting in arrival order while they fit, each with its own counts', async () => {
    const { pool: counted, statements } = countingPool();
    const store = createPostgresQuotaStore({ pool: counted, schema: freshSchema() });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = (cost: number) => store.consume({ clientId: 'together', apiPath: '/x', cost, buckets: buckets(now, 30), now });
    const results = await Promise.all(Array.from({ length: 50 }, () => call(1)));
    expect(statements()).toBe(1);
    expect(results.slice(0, 30)).toEqual(Array.from({ length: 30 }, (_, i) => ({ admitted: true, used: [i + 1] })));
    expect(results.slice(30)).toEqual(Array.from({ length: 20 }, () => ({ admitted: false, used: [30] })));

    // A call that does not fit is skipped, and a later, cheaper one still gets the room left.
    const mixed = await Promise.all([5, 5, 3, 5, 1].map((cost) => store.consume({ clientId: 'mixed', apiPath: '/x', cost, buckets: buckets(now, 12), now })));
    expect(statements()).toBe(2);
    expect(mixed).toEqual([
      { admitted: true, used: [5] },
      { admitted: true, used: [10] },
      { admitted: false, used: [10] },
      { admitted: false, used: [10] },
      { admitted: true, used: [11] },
    ]);
    expect(await store.peek({ clientId: 'mixed', apiPath: '/x', buckets: buckets(now, 12), now })).toEqual([11]);
  });

  it('sends calls of other clients, paths, buckets or limits in the same turn as statements of their own', async () => {
    const { pool: counted, statements } = countingPool();
    const store = createPostgresQuotaStore({ pool: counted, schema: freshSchema() });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = (clientId: string, apiPath: string, limit: number, at = now) => store.consume({ clientId, apiPath, cost: 1, buckets: buckets(at, limit), now });
    const results = await Promise.all([
      call('a', '/x', 1),
      call('b', '/x', 1),
      call('a', '/y', 1),
      call('a', '/x', 1, now + 60_000), // the next minute: another row
      call('a', '/x', 1),
      call('b', '/x', 1),
      call('c', '/x', 5),
      call('c', '/x', 6), // another limit: its own statement, on the same row
    ]);
    expect(statements()).toBe(6);
    expect(results.slice(0, 6)).toEqual([
      { admitted: true, used: [1] },
      { admitted: true, used: [1] },
      { admitted: true, used: [1] },
      { admitted: true, used: [1] },
      { admitted: false, used: [1] },
      { admitted: false, used: [1] },
    ]);
    expect(results.slice(6).map((r) => r.admitted)).toEqual([true, true]);
    expect(results.slice(6).map((r) => r.used[0]).sort()).toEqual([1, 2]);
  });

  /** The pool, holding back each consume statement until the test lets it go. */
  function holdingPool() {
    const held: { calls: number; release: () => void }[] = [];
    const counted = new Proxy(pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (text: string, values?: unknown[]) => {
          if (/_consume"\(/.test(text)) {
            await new Promise<void>((release) => held.push({ calls: (values![6] as number[]).length, release }));
          }
          return target.query(text, values);
        };
      },
    });
    return { pool: counted, held };
  }
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  /** Lets the event loop turn until `done()` holds (at most 1000 turns). */
  const until = async (done: () => boolean): Promise<void> => {
    for (let i = 0; i < 1000 && !done(); i++) await nextTurn();
    expect(done()).toBe(true);
  };

  it('while a statement of a client and path is in flight, holds their next calls back and sends them together as the next one', async () => {
    const { pool: holding, held } = holdingPool();
    const store = createPostgresQuotaStore({ pool: holding, schema: freshSchema(), migrate: false });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = (clientId = 'queued') => store.consume({ clientId, apiPath: '/x', cost: 1, buckets: buckets(now, 3), now });
    const first = call();
    await until(() => held.length === 1);
    const later = [call()];
    await nextTurn();
    later.push(call(), call());
    const other = call('someone-else'); // another client is not held back
    await until(() => held.length === 2);
    for (let i = 0; i < 10; i++) await nextTurn();
    expect(held.map((statement) => statement.calls)).toEqual([1, 1]);
    held[1]!.release();
    expect(await other).toEqual({ admitted: true, used: [1] });
    held[0]!.release();
    expect(await first).toEqual({ admitted: true, used: [1] });
    await until(() => held.length === 3);
    expect(held.map((statement) => statement.calls)).toEqual([1, 1, 3]);
    held[2]!.release();
    expect(await Promise.all(later)).toEqual([
      { admitted: true, used: [2] },
      { admitted: true, used: [3] },
      { admitted: false, used: [3] },
    ]);
    await store.close();
  });

  it('stops holding calls back behind a statement that has not answered for a second', async () => {
    const { pool: holding, held } = holdingPool();
    const store = createPostgresQuotaStore({ pool: holding, schema: freshSchema(), migrate: false });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = () => store.consume({ clientId: 'stalled', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now });
    const stalled = call();
    await until(() => held.length === 1);
    const heldBack = call();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(held).toHaveLength(1);
    const after = call();
    await until(() => held.length === 2);
    expect(held.map((statement) => statement.calls)).toEqual([1, 2]); // the held-back call goes with the next one
    held[1]!.release();
    expect(await Promise.all([heldBack, after])).toEqual([
      { admitted: true, used: [1] },
      { admitted: true, used: [2] },
    ]);
    held[0]!.release();
    expect(await stalled).toEqual({ admitted: true, used: [3] });
    await store.close();
  });

  it('migrates a counter table that already holds counts without losing them', async () => {
    const schema = freshSchema();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const [bucket] = buckets(now, 10);
    // The table alone, as a store without the consume function left it.
    await pool.query(`CREATE SCHEMA "${schema}"`);
    await pool.query(`CREATE TABLE "${schema}".courier_quota_counter (
      client_id text NOT NULL, api_path text NOT NULL, period text NOT NULL, bucket_start bigint NOT NULL, bucket_end bigint NOT NULL,
      used bigint NOT NULL DEFAULT 0 CHECK (used >= 0), PRIMARY KEY (client_id, api_path, period, bucket_start))`);
    await pool.query(`INSERT INTO "${schema}".courier_quota_counter VALUES ('kept', '/x', 'minute', $1, $2, 9)`, [bucket!.start, bucket!.end]);
    const store = createPostgresQuotaStore({ pool, schema });
    const call = () => store.consume({ clientId: 'kept', apiPath: '/x', cost: 1, buckets: buckets(now, 10), now });
    expect(await call()).toEqual({ admitted: true, used: [10] });
    expect(await call()).toEqual({ admitted: false, used: [10] });
  });

  const invalidOption = (field: string) => expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_option', field });

  it('rejects schema and table names that are not plain lower-case identifiers, naming the option', () => {
    for (const schema of ['Public', 'a-b', '1abc', 'x"; DROP TABLE y; --', '']) {
      expect(() => createPostgresQuotaStore({ pool, schema }), schema).toThrow(invalidOption('schema'));
    }
    expect(() => createPostgresQuotaStore({ pool, table: 'quota counter' })).toThrow(invalidOption('table'));
    expect(() => quotaMigrationSql({ schema: 'BAD' })).toThrow(invalidOption('schema'));
  });

  it.each<[string, Record<string, unknown>]>([
    ['pool', { pool: { query: async () => ({ rows: [] }) } }],
    ['cleanupIntervalMs', { cleanupIntervalMs: -1 }],
    ['cleanupBatchSize', { cleanupBatchSize: 0 }],
    ['expiryGraceMs', { expiryGraceMs: 1.5 }],
    ['lockTimeoutMs', { lockTimeoutMs: 2 ** 31 }],
  ])('rejects a bad %s, naming it', (field, options) => {
    expect(() => createPostgresQuotaStore({ pool, ...options } as Parameters<typeof createPostgresQuotaStore>[0])).toThrow(invalidOption(field));
  });
});
