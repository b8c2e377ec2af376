/**
 * The insurance limiter: while the shared store is away and `onStoreError` is `'open'`, each
 * client and path is capped in this process at its minute and day limits, on the same calendar
 * windows the store counts in. It starts from the counts the store last reported for that client
 * and path in the current minute and day, so an outage does not hand out a fresh allowance: a
 * minute the store saw used up stays used up until it rolls over.
 */
import { PairCache } from '../core/pair-cache.js';
import { bucketOf, decide, type DecisionBase, type QuotaAdmitted, type QuotaRejected } from './decision.js';
import type { QuotaCalendar } from './periods.js';
import type { ResolvedQuotaRule } from './rules.js';
import type { ConsumeRequest, QuotaBucket } from './store/types.js';

const MAX_REMEMBERED = 10_000;

/** The last known use of one client and path, per window start. */
interface Counts {
  minuteStart: number;
  minute: number;
  dayStart: number;
  day: number;
}

export interface InsuranceLimiter {
  /** Keeps what the store answered for `request` (its `used`, in request order) as the starting point. */
  remember(request: ConsumeRequest, used: readonly number[]): void;
  /** Admits or rejects one call against the local counts, and counts it when admitted. */
  decide(base: DecisionBase, rule: ResolvedQuotaRule): QuotaAdmitted | QuotaRejected;
}

/** With `enabled` false every call is admitted while the store is away. */
export function createInsuranceLimiter(enabled: boolean, calendar: QuotaCalendar): InsuranceLimiter {
  const known = new PairCache<Counts>(MAX_REMEMBERED);

  const countsOf = (clientId: string, apiPath: string, minuteStart: number, dayStart: number): Counts => {
    let counts = known.get(clientId, apiPath);
    if (!counts) {
      counts = { minuteStart, minute: 0, dayStart, day: 0 };
      known.set(clientId, apiPath, counts);
    }
    if (counts.minuteStart !== minuteStart) {
      counts.minuteStart = minuteStart;
      counts.minute = 0;
    }
    if (counts.dayStart !== dayStart) {
      counts.dayStart = dayStart;
      counts.day = 0;
    }
    return counts;
  };

  return {
    remember(request, used) {
      if (!enabled) return;
      let minute: number | undefined;
      let day: number | undefined;
      const { buckets } = request;
      for (let i = 0; i < buckets.length; i++) {
        const bucket = buckets[i] as QuotaBucket;
        if (bucket.period === 'minute') minute = i;
        else if (bucket.period === 'day') day = i;
      }
      if (minute === undefined || day === undefined) return;
      const counts = countsOf(request.clientId, request.apiPath, (buckets[minute] as QuotaBucket).start, (buckets[day] as QuotaBucket).start);
      counts.minute = used[minute] ?? 0;
      counts.day = used[day] ?? 0;
    },

    decide(base, rule) {
      if (!enabled) return { ...base, rule, source: 'insurance', outcome: 'admitted', admitted: true, periods: [] };
      const [minuteWindow, dayWindow] = calendar.windows(base.now);
      const counts = countsOf(base.clientId, base.apiPath, minuteWindow.start, dayWindow.start);
      // Only limited periods are held and reported: the local counts of an unlimited one mean nothing.
      const buckets: QuotaBucket[] = [];
      const used: number[] = [];
      if (rule.limits.minute > 0) {
        buckets.push(bucketOf(minuteWindow, rule));
        used.push(counts.minute);
      }
      if (rule.limits.day > 0) {
        buckets.push(bucketOf(dayWindow, rule));
        used.push(counts.day);
      }
      const admitted = buckets.every((bucket, i) => (used[i] as number) + rule.cost <= bucket.limit);
      if (admitted) {
        counts.minute += rule.cost;
        counts.day += rule.cost;
        for (let i = 0; i < used.length; i++) used[i] = (used[i] as number) + rule.cost;
      }
      const request: ConsumeRequest = { clientId: base.clientId, apiPath: base.apiPath, cost: rule.cost, buckets, now: base.now };
      return { ...decide(request, rule, { admitted, used }), source: 'insurance' };
    },
  };
}
