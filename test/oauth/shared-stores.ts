/**
 * OAuth stores for tests of counts that several platform instances share: each `open()` is one
 * more store on its own connection (ioredis client, pg pool) and the same data, as a second
 * process would have. Every factory works under a key prefix or schema of its own.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import pg from 'pg';
import { createMemoryOAuthStore, createPostgresOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { globEscape, scanKeys } from '../../src/core/redis-scan.js';
import { databaseUrl, redisUrl, uniqueName } from '../support/services.js';

export interface StoreFactory {
  readonly label: string;
  /** True when instances opened here count together. */
  readonly shared: boolean;
  /** One more store; `now` is its clock (the brute-force windows in memory run on `performance.now` instead). */
  open(now?: () => number): OAuthStore;
  /**
   * The ids the store holds as given back (counted or not) on a key of the windows named `name`,
   * in the order given; none in memory. `at`, the store's time, leaves out those forgotten by
   * then that a store keeps until its sweep (PostgreSQL); Redis drops them as it writes the key.
   */
  givenBack?(name: string, key: string, at?: number): Promise<string[]>;
  /** Deletes what the stores wrote and closes their connections. */
  close(): Promise<void>;
}

export function memoryStores(): StoreFactory {
  return { label: 'memory', shared: false, open: (now) => createMemoryOAuthStore({ now }), close: async () => {} };
}

export function redisStores(): StoreFactory & Required<Pick<StoreFactory, 'givenBack'>> & { prefix: string; client(): Redis } {
  const prefix = `${uniqueName('bruteforce')}:`;
  const clients: Redis[] = [];
  const newClient = () => {
    const client = new Redis(redisUrl!);
    clients.push(client);
    return client;
  };
  return {
    label: 'Redis',
    shared: true,
    prefix,
    client: () => clients[0] ?? newClient(),
    open: (now) => createRedisOAuthStore({ client: newClient(), prefix, now }),
    async givenBack(name, key) {
      const client = clients[0] ?? newClient();
      const keys = await scanKeys(client, globEscape(`${prefix}given-back:${name}:{${key}}`));
      return (await Promise.all(keys.map((found) => client.zrange(found, 0, -1)))).flat();
    },
    async close() {
      const client = clients[0] ?? newClient();
      const keys = await scanKeys(client, `${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      await Promise.all(clients.map((c) => c.quit()));
    },
  };
}

export function postgresStores(options: { migrate?: boolean; now?: () => number } = {}): StoreFactory & Required<Pick<StoreFactory, 'givenBack'>> & { schema: string; pool(): pg.Pool } {
  const schema = uniqueName('bruteforce');
  const pools: pg.Pool[] = [];
  const newPool = () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    pools.push(pool);
    return pool;
  };
  return {
    label: 'PostgreSQL',
    shared: true,
    schema,
    pool: () => pools[0] ?? newPool(),
    open: (now) => createPostgresOAuthStore({ pool: newPool(), schema, ...options, ...(now && { now }) }),
    async givenBack(name, key, at) {
      const { rows } = await (pools[0] ?? newPool()).query(
        `SELECT id FROM "${schema}".oauth_given_back WHERE key = $1 AND until > $2::bigint ORDER BY until, id`,
        [`${name}:${key}`, at ?? 0],
      );
      return rows.map((row: { id: string }) => row.id);
    },
    async close() {
      const pool = pools[0] ?? newPool();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await Promise.all(pools.map((p) => p.end()));
    },
  };
}

/** Fresh stores for each test of the suite that calls it, closed after the test: the getter answers the running test's. */
export function storesForEachTest(makeStores: () => StoreFactory): () => StoreFactory {
  let stores: StoreFactory | undefined;
  beforeEach(() => {
    stores = makeStores();
  });
  afterEach(async () => {
    await stores?.close();
  });
  return () => stores!;
}
