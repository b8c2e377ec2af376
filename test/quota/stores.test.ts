/**
 * Memory, Redis and PostgreSQL behave the same (docs/stores.md): the one conformance suite on each
 * store. What is particular to each store is in memory-store, redis-store and postgres-store.test.ts.
 */
import { createMemoryQuotaStore, createPostgresQuotaStore, createRedisQuotaStore } from '../../src/quota/index.js';
import { describePostgres, describeRedis, uniqueName } from '../support/services.js';
import { describeQuotaStoreConformance } from './store-conformance.js';
import { deleteKeys, dropSchema, newPool, newRedis } from './store-helpers.js';

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
