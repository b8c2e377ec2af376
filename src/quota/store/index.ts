export {
  exhaustedPeriods,
  type ConsumeRequest,
  type ConsumeResult,
  type PeekRequest,
  type QuotaBucket,
  type QuotaStore,
} from './types.js';
export { createMemoryQuotaStore, type MemoryQuotaStore, type MemoryQuotaStoreOptions } from './memory.js';
export {
  createRedisQuotaStore,
  CONSUME_SCRIPT,
  CONSUME_SCRIPT_SHA,
  type RedisLike,
  type RedisPipelineLike,
  type RedisQuotaStore,
  type RedisQuotaStoreOptions,
} from './redis.js';
export {
  createPostgresQuotaStore,
  quotaMigrationSql,
  type PgClientLike,
  type PgPoolLike,
  type PgQueryable,
  type PgQueryResultLike,
  type PostgresQuotaStore,
  type PostgresQuotaStoreOptions,
} from './postgres.js';
