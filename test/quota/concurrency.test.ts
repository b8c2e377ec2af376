/**
 * Concurrent calls from many processes never admit more than the limit. Four processes fire
 * their calls at the same moment against one path with a minute limit of 100:
 *
 * - one client, 400 calls per process: exactly 100 are admitted in total, and the day counter
 *   reads exactly 100;
 * - 50 clients at once, 40 calls per client per process (160 per client): every client gets
 *   exactly 100, and each one's day counter reads exactly 100.
 *
 * The same four processes make every burst of this file, on Redis and on PostgreSQL.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, it } from 'vitest';
import { createPostgresQuotaStore, createRedisQuotaStore } from '../../src/quota/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { BURST_LIMIT, BURSTS, expectExactlyTheLimit, useBurstWorkers } from './burst.js';

const burst = useBurstWorkers();

describeRedis('quota under concurrency: Redis', () => {
  const prefix = uniqueName('quota_burst');
  const redis = redisUrl ? new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true }) : undefined;
  afterAll(async () => {
    if (!redis) return;
    let cursor = '0';
    for (let i = 0; i < 1000; i++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
    await redis.quit();
  });

  for (const shape of BURSTS) {
    it(`${shape.name}: each client admitted exactly ${BURST_LIMIT}, its day counter reads ${BURST_LIMIT}`, async () => {
      const result = await burst({ kind: 'redis', redisUrl: redisUrl as string, prefix }, shape);
      await expectExactlyTheLimit(createRedisQuotaStore({ client: redis as Redis, prefix }), result);
    }, 150_000);
  }
});

describePostgres('quota under concurrency: PostgreSQL', () => {
  const schema = uniqueName('quota_burst');
  const pool = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: 2 }) : undefined;
  pool?.on('error', () => {});
  afterAll(async () => {
    if (!pool) return;
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  for (const shape of BURSTS) {
    it(`${shape.name}: each client admitted exactly ${BURST_LIMIT}, its day counter reads ${BURST_LIMIT}, without deadlocks`, async () => {
      const store = createPostgresQuotaStore({ pool: pool as pg.Pool, schema });
      await store.migrate();
      const result = await burst({ kind: 'postgres', databaseUrl: databaseUrl as string, schema }, shape);
      await expectExactlyTheLimit(store, result);
    }, 150_000);
  }
});
