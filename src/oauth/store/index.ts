/** The OAuth storage contract and its three implementations. */
export type * from './types.js';
export { createMemoryOAuthStore, type MemoryOAuthStore, type MemoryOAuthStoreOptions } from './memory.js';
export {
  createRedisOAuthStore,
  type RedisLike,
  type RedisOAuthStore,
  type RedisOAuthStoreOptions,
  type RedisRateLimitStore,
} from './redis.js';
export {
  createPostgresOAuthStore,
  type PgQueryable,
  type PostgresOAuthStore,
  type PostgresOAuthStoreOptions,
  type PostgresRateLimitStore,
} from './postgres.js';
