/**
 * Runs the OAuthStore conformance suite against memory, Redis and PostgreSQL. What only one
 * backend can get wrong is beside it, in memory-store, redis-store and postgres-store.test.ts.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { createMemoryOAuthStore, createPostgresOAuthStore, createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { describeOAuthStoreConformance } from './store-conformance.js';
import { deleteKeys, scanKeys } from './store-helpers.js';

describeOAuthStoreConformance({
  name: 'memory',
  create: async (now) => {
    const store = createMemoryOAuthStore({ now });
    return { store, footprint: async () => store.size, cleanup: async () => {} };
  },
});

/**
 * Keys under the grant's hash tag, their fields, and the bytes of every value: a list kept inside
 * one field (the earlier refresh tokens) shows when it grows.
 */
async function redisFootprint(client: Redis, prefix: string, grantId: string): Promise<number> {
  let size = 0;
  for (const key of await scanKeys(client, `${prefix}{${encodeURIComponent(grantId)}}`)) {
    size += 1;
    if ((await client.type(key)) !== 'hash') {
      size += await client.strlen(key);
      continue;
    }
    for (const field of await client.hkeys(key)) size += 1 + (await client.hstrlen(key, field));
  }
  return size;
}

describeRedis('Redis OAuthStore', () => {
  describeOAuthStoreConformance({
    name: 'Redis',
    create: async (now) => {
      const client = new Redis(redisUrl!);
      const prefix = `${uniqueName('oauth')}:`;
      return {
        store: createRedisOAuthStore({ client, prefix, now }),
        footprint: (grantId) => redisFootprint(client, prefix, grantId),
        cleanup: async () => {
          await deleteKeys(client, prefix);
          await client.quit();
        },
      };
    },
  });
});

describePostgres('PostgreSQL OAuthStore', () => {
  describeOAuthStoreConformance({
    name: 'PostgreSQL',
    create: async (now) => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
      const schema = uniqueName('oauth');
      return {
        store: createPostgresOAuthStore({ pool, schema, now }),
        // The rows of the grant and their stored size.
        footprint: async (grantId) => {
          const { rows } = await pool.query<{ bytes: string }>(
            `SELECT coalesce(sum(pg_column_size(g.*)), 0) AS bytes FROM "${schema}".oauth_grants g WHERE grant_id = $1`,
            [grantId],
          );
          return Number(rows[0]!.bytes);
        },
        cleanup: async () => {
          await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await pool.end();
        },
      };
    },
  });
});
