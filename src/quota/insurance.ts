/**
 * The insurance limiter: while the shared store is away and `onStoreError` is `'open'`, each
 * client and path is capped locally at its minute limit (rate-limiter-flexible's
 * `RateLimiterMemory`), so an outage cannot turn into unlimited traffic.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { retryAfterSeconds, type DecisionBase, type QuotaAdmitted, type QuotaPeriodState, type QuotaRejected } from './decision.js';
import type { ResolvedQuotaRule } from './rules.js';

/** One RateLimiterMemory per distinct minute limit; bounded. */
const MAX_LIMITERS = 256;

export type InsuranceLimiter = (base: DecisionBase, rule: ResolvedQuotaRule) => Promise<QuotaAdmitted | QuotaRejected>;

/** With `enabled` false every call is admitted while the store is away. */
export function createInsuranceLimiter(enabled: boolean): InsuranceLimiter {
  const limiters = new Map<number, RateLimiterMemory>();
  const limiterFor = (limit: number): RateLimiterMemory => {
    let limiter = limiters.get(limit);
    if (!limiter) {
      if (limiters.size >= MAX_LIMITERS) limiters.delete(limiters.keys().next().value as number);
      limiter = new RateLimiterMemory({ points: limit, duration: 60, keyPrefix: `cp-quota-insurance-${limit}` });
      limiters.set(limit, limiter);
    }
    return limiter;
  };

  return async (base, rule) => {
    const limit = rule.limits.minute;
    const counted = { ...base, rule, source: 'insurance' as const };
    if (!enabled || limit === 0) return { ...counted, outcome: 'admitted', admitted: true, periods: [] };
    const key = `${encodeURIComponent(base.clientId)} ${base.apiPath}`;
    const state = (used: number, msBeforeNext: number): QuotaPeriodState => ({
      period: 'minute',
      limit,
      used,
      remaining: Math.max(0, limit - used),
      unlimited: false,
      // rate-limiter-flexible's window starts at the first call (not calendar-aligned) and runs on the real clock
      resetAt: base.now + Math.max(0, msBeforeNext),
    });
    try {
      const res = await limiterFor(limit).consume(key, rule.cost);
      return { ...counted, outcome: 'admitted', admitted: true, periods: [state(res.consumedPoints, res.msBeforeNext)] };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) return { ...counted, outcome: 'admitted', admitted: true, periods: [] };
      // rate-limiter-flexible counts the rejected points too; report what was admitted.
      const used = Math.min(limit, rejection.consumedPoints - rule.cost);
      const resetAt = base.now + Math.max(rejection.msBeforeNext, 0);
      return {
        ...counted,
        outcome: 'rejected',
        admitted: false,
        periods: [state(Math.max(0, used), rejection.msBeforeNext)],
        exhausted: ['minute'],
        period: 'minute',
        resetAt,
        retryAfterSeconds: retryAfterSeconds(resetAt, base.now),
      };
    }
  };
}
