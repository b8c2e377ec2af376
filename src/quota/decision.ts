/**
 * The decision on one guarded call: what the store's counts mean for the caller (admitted, or
 * rejected with the period that is used up), in the shapes the guard and its headers read.
 */
import type { QuotaFailure } from './errors.js';
import type { PeriodWindow, QuotaPeriod } from './periods.js';
import type { ResolvedQuotaRule } from './rules.js';
import { exhaustedPeriods, type ConsumeRequest, type ConsumeResult, type QuotaBucket } from './store/types.js';

/** One period as the guard and get_quota report it. */
export interface QuotaPeriodState {
  period: QuotaPeriod;
  /** 0 = unlimited. */
  limit: number;
  used: number;
  /** What is left this period; -1 when unlimited. */
  remaining: number;
  unlimited: boolean;
  /** Start of the next period, UTC ms. */
  resetAt: number;
}

export interface DecisionBase {
  clientId: string;
  /** Normalised. */
  apiPath: string;
  /** The service clock when the decision was taken, UTC ms. */
  now: number;
}

interface CountedDecision extends DecisionBase {
  rule: ResolvedQuotaRule;
  /**
   * `store`: the shared store counted this call. `insurance`: the store failed and
   * `onStoreError: 'open'` let the local limiter decide (periods then hold the minute and day, those limited).
   */
  source: 'store' | 'insurance';
  periods: QuotaPeriodState[];
}

export interface QuotaAdmitted extends CountedDecision {
  outcome: 'admitted';
  admitted: true;
}

export interface QuotaRejected extends CountedDecision {
  outcome: 'rejected';
  admitted: false;
  /** Every period without room for the cost. */
  exhausted: QuotaPeriod[];
  /** The exhausted period that resets last: the one the 429 body names. */
  period: QuotaPeriod;
  /** Its reset, UTC ms. */
  resetAt: number;
  /** Seconds until `resetAt`, rounded up, at least 1: the `Retry-After` value. */
  retryAfterSeconds: number;
}

export interface QuotaStoreUnavailable extends DecisionBase {
  outcome: 'store_unavailable';
  admitted: false;
  /** Known when only the store failed, or when the failing rule source had answered for this client and path before. */
  rule?: ResolvedQuotaRule;
  error: QuotaFailure;
}

export type QuotaDecision = QuotaAdmitted | QuotaRejected | QuotaStoreUnavailable;

export function bucketOf(window: PeriodWindow, rule: ResolvedQuotaRule): QuotaBucket {
  const { limits } = rule;
  // Named reads: one read keyed by the period's name sees three names and goes megamorphic.
  const limit = window.period === 'minute' ? limits.minute : window.period === 'day' ? limits.day : limits.month;
  return { period: window.period, start: window.start, end: window.end, limit };
}

export function periodState(bucket: QuotaBucket, used: number): QuotaPeriodState {
  const unlimited = bucket.limit === 0;
  return {
    period: bucket.period,
    limit: bucket.limit,
    used,
    remaining: unlimited ? -1 : Math.max(0, bucket.limit - used),
    unlimited,
    resetAt: bucket.end,
  };
}

/** Seconds until `resetAt`, rounded up, at least 1. */
export function retryAfterSeconds(resetAt: number, now: number): number {
  return Math.max(1, Math.ceil((resetAt - now) / 1000));
}

/** What the store's answer to `request` means for the caller. */
export function decide(request: ConsumeRequest, rule: ResolvedQuotaRule, result: ConsumeResult): QuotaAdmitted | QuotaRejected {
  const { clientId, apiPath, now, buckets } = request;
  const periods = buckets.map((bucket, i) => periodState(bucket, result.used[i] ?? 0));
  // Spelled out rather than `{ ...base, ... }`: V8 takes a slow path when properties are
  // added after a spread (measured ~2 µs on Node 20), and this runs on every guarded call.
  if (result.admitted) return { clientId, apiPath, now, rule, source: 'store', outcome: 'admitted', admitted: true, periods };
  let exhausted = exhaustedPeriods(buckets, result.used, rule.cost);
  if (exhausted.length === 0) exhausted = buckets.filter((b) => b.limit > 0).map((b) => b.period); // a store that disagrees with itself
  let latest = buckets.find((b) => b.period === exhausted[0]) ?? (buckets[0] as QuotaBucket);
  for (const bucket of buckets) if (exhausted.includes(bucket.period) && bucket.end > latest.end) latest = bucket;
  return {
    clientId,
    apiPath,
    now,
    rule,
    source: 'store',
    outcome: 'rejected',
    admitted: false,
    periods,
    exhausted,
    period: latest.period,
    resetAt: latest.end,
    retryAfterSeconds: retryAfterSeconds(latest.end, now),
  };
}
