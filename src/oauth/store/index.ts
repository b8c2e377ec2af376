/** The OAuth storage contract and its three implementations. */
export type * from './types.js';
export { createMemoryOAuthStore, type MemoryOAuthStoreOptions } from './memory.js';
export type { RedisLike, PgQueryable } from '../../core/store-clients.js';
export { createRedisOAuthStore, type RedisOAuthStore, type RedisOAuthStoreOptions, type RedisRateLimitStore } from './redis.js';
export {
  createPostgresOAuthStore,
  oauthMigrationSql,
  type PostgresOAuthStore,
  type PostgresOAuthStoreOptions,
  type PostgresRateLimitStore,
} from './postgres.js';
