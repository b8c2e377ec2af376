export {
  exhaustedPeriods,
  type ConsumeRequest,
  type ConsumeResult,
  type PeekRequest,
  type QuotaBucket,
  type QuotaRuleKey,
  type QuotaRuleStore,
  type QuotaStore,
  type QuotaUsageStore,
} from './types.js';
export type { PgClientLike, PgPoolLike, PgQueryable, PgQueryResultLike, RedisLike, RedisPipelineLike } from '../../core/store-clients.js';
export { createMemoryQuotaStore, type MemoryQuotaStoreOptions } from './memory.js';
export {
  createRedisQuotaStore,
  CONSUME_SCRIPT_SHA,
  type RedisQuotaStore,
  type RedisQuotaStoreOptions,
} from './redis.js';
export {
  createPostgresQuotaStore,
  quotaMigrationSql,
  type PostgresQuotaStore,
  type PostgresQuotaStoreOptions,
} from './postgres.js';
