/**
 * One quota store shared by several platform processes: a Redis prefix or a PostgreSQL schema of
 * its own, removed by `close()`.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { databaseUrl, dropPrefix, redisUrl, uniqueName } from '../support/services.js';

export interface SharedQuotaStore {
  /** A store instance for one more process on the same data. */
  store(): QuotaStore;
  close(): Promise<void>;
}

export function redisQuotaStores(label: string): SharedQuotaStore {
  const client = new Redis(redisUrl!);
  const prefix = uniqueName(label);
  return {
    store: () => createRedisQuotaStore({ client, prefix }),
    async close() {
      await dropPrefix(client, prefix);
    },
  };
}

export function postgresQuotaStores(label: string): SharedQuotaStore {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const schema = uniqueName(label);
  return {
    store: () => createPostgresQuotaStore({ pool, schema }),
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
