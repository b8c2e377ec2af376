/**
 * The stores take the clients users already have (docs/stores.md): an ioredis `Redis` or
 * `Cluster`, a `pg.Pool`, are accepted as they are. Checked by the compiler (`tsc --noEmit`)
 * and by vitest's `expectTypeOf`.
 */
import type { Cluster, Redis } from 'ioredis';
import type pg from 'pg';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  PgPoolLike,
  QuotaDecision,
  QuotaIdentity,
  QuotaInspection,
  QuotaReport,
  RedisLike,
} from '../../src/quota/index.js';

describe('quota types', () => {
  it('accepts ioredis Redis and Cluster as the Redis client', () => {
    expectTypeOf<Redis>().toExtend<RedisLike>();
    expectTypeOf<Cluster>().toExtend<RedisLike>();
  });

  it('accepts a pg.Pool as the PostgreSQL pool, and its PoolClient as the checked-out client', () => {
    expectTypeOf<pg.Pool>().toExtend<PgPoolLike>();
  });

  it('narrows a decision by its outcome', () => {
    const narrow = (d: QuotaDecision) => {
      if (d.outcome === 'rejected') expectTypeOf(d.retryAfterSeconds).toEqualTypeOf<number>();
      if (d.outcome === 'store_unavailable') expectTypeOf(d).not.toHaveProperty('periods');
      if (d.admitted) expectTypeOf(d.outcome).toEqualTypeOf<'admitted'>();
    };
    expectTypeOf(narrow).toBeFunction();
  });

  it('gives get_quota the documented field names', () => {
    expectTypeOf<QuotaReport['periods'][number]>().toEqualTypeOf<{
      period: 'minute' | 'day' | 'month';
      limit: number;
      used: number;
      remaining: number;
      unlimited: boolean;
      reset_at: string;
    }>();
    expectTypeOf<Extract<QuotaInspection, { outcome: 'ok' }>['time']>().toEqualTypeOf<string>();
    expectTypeOf<QuotaIdentity>().toEqualTypeOf<{ clientId: string; sub?: string; scope: string[] }>();
  });
});
