/**
 * STORE=memory|redis|postgres: where OAuth records and quota counters live. Two example processes on the same Redis
 * or PostgreSQL act as one platform. With REDIS_CLUSTER_NODES, STORE=redis talks to that Redis Cluster.
 */
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import {
  createMemoryOAuthStore,
  createMemoryQuotaStore,
  createPostgresOAuthStore,
  createPostgresQuotaStore,
  createRedisOAuthStore,
  createRedisQuotaStore,
  type OAuthStore,
  type QuotaStore,
} from 'courier-platform';
import type { ExampleConfig } from './config.js';
import { createMemorySessionStore, createPostgresSessionStore, createRedisSessionStore, type SessionStore } from './session-store.js';

export interface ExampleStores {
  oauth: OAuthStore;
  quota: QuotaStore;
  /** The demo's sign-in sessions, next to the platform's records. */
  sessions: SessionStore;
  redis?: Redis | Cluster;
  pool?: pg.Pool;
  close(): Promise<void>;
}

export function createStores(config: ExampleConfig): ExampleStores {
  if (config.store === 'redis') {
    // Fail fast while Redis is away, so the quota's onStoreError policy decides instead of a queue.
    // A command in flight when the connection broke must not be re-sent: it would be counted twice.
    // A connection that stops answering without closing (a partition) is dropped after 5 s, so the
    // commands of calls already answered 503 do not pile up in the client (docs/deployment.md#redis).
    const options = { maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false, socketTimeout: 5000 };
    const redis = config.redisClusterNodes
      ? new Cluster(config.redisClusterNodes, { enableOfflineQueue: false, redisOptions: options })
      : new Redis(config.redisUrl, options);
    redis.on('error', () => {}); // reconnects by itself; the platform logs what it affects
    return {
      oauth: createRedisOAuthStore({ client: redis }),
      quota: createRedisQuotaStore({ client: redis }),
      sessions: createRedisSessionStore(redis),
      redis,
      close: async () => void (await redis.quit()),
    };
  }
  if (config.store === 'postgres') {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10, min: 10, connectionTimeoutMillis: 2_000, query_timeout: 5_000 }); // min: ready() opened them; keep them open (docs/stores.md#at-start); query_timeout: a server that stops answering is left (docs/deployment.md#postgresql-pools)
    pool.on('error', () => {}); // a broken idle connection is replaced on the next checkout
    return {
      oauth: createPostgresOAuthStore({ pool }),
      quota: createPostgresQuotaStore({ pool }),
      sessions: createPostgresSessionStore(pool),
      pool,
      close: () => pool.end(),
    };
  }
  return { oauth: createMemoryOAuthStore(), quota: createMemoryQuotaStore(), sessions: createMemorySessionStore(), close: async () => {} };
}
