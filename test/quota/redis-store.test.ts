/**
 * What only the Redis quota store can get wrong: the commands and batches it sends (through a
 * recording client, then a real server), its keys and their expiry. The behaviour it shares with
 * the others is in stores.test.ts.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { CONSUME_SCRIPT_SHA, createQuotaService, createRedisQuotaStore, type QuotaBucket, type RedisLike } from '../../src/quota/index.js';
import { describeRedis, uniqueName } from '../support/services.js';
import { buckets, deleteKeys, newRedis, scanKeys } from './store-helpers.js';

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
