/** The Redis and PostgreSQL connections, clean-up and buckets the quota store tests share. */
import { Redis } from 'ioredis';
import pg from 'pg';
import { scanKeys } from '../../src/core/redis-scan.js';
import type { QuotaBucket } from '../../src/quota/index.js';
import { databaseUrl, redisUrl } from '../support/services.js';

export { scanKeys };

export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await scanKeys(redis, `{${prefix}:*`);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
}

export function newRedis(): Redis {
  return new Redis(redisUrl as string, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false });
}

export function newPool(max = 5): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {}); // an idle connection that breaks is simply replaced
  return pool;
}

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

export const buckets = (now: number, limit: number): QuotaBucket[] => [
  { period: 'minute', start: now - (now % 60_000), end: now - (now % 60_000) + 60_000, limit },
];
