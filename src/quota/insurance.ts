/**
 * The insurance limiter: while the shared store is really failing (docs/quota.md#when-the-store-is-slow-or-down)
 * and `onStoreError` is `'open'`, each client and path is capped in this process at its minute
 * and day limits, on the same calendar windows the store counts in. A slow store never gets here:
 * the service waits for its answer.
 *
 * It admits only what the store's last counts allow: it starts from the highest counts the store
 * reported for that client and path in the current minute and day, and adds what the store may
 * not have seen yet: every call this process admitted on its own, and every call that went to the
 * store and got no answer (the store may have counted it). An outage does not hand out a fresh
 * allowance, and a minute the store saw used up stays used up until it rolls over.
 */
import { PairCache } from '../core/cache.js';
import { bucketOf, decide, type DecisionBase, type QuotaAdmitted, type QuotaRejected } from './decision.js';
import type { QuotaCalendar } from './periods.js';
import type { ResolvedQuotaRule } from './rules.js';
import type { ConsumeRequest, QuotaBucket } from './store/types.js';

/** Client and path pairs counted at most; past it the least recently used clients go first. */
const MAX_REMEMBERED = 10_000;

/** One window's count: what the store last said, and what it may not know of. */
interface WindowCount {
  start: number;
  stored: number;
  unseen: number;
}

interface Counts {
  minute: WindowCount;
  day: WindowCount;
}

export interface InsuranceLimiter {
  /** Keeps what the store answered for `request` (its `used`, in request order). */
  remember(request: ConsumeRequest, used: readonly number[]): void;
  /** A call went to the store and got no answer: it may have been counted. */
  unanswered(request: ConsumeRequest): void;
  /** The answer of a call counted as unanswered arrived after all. */
  answeredLate(request: ConsumeRequest, used: readonly number[]): void;
  /** The store's counters were reset: what it reported and what this process admitted on its own no longer count. */
  forget(clientId: string, apiPath?: string): void;
  /** Admits or rejects one call against the local counts, and counts it when admitted. */
  decide(base: DecisionBase, rule: ResolvedQuotaRule): QuotaAdmitted | QuotaRejected;
}

function periodIndex(buckets: readonly QuotaBucket[], period: 'minute' | 'day'): number {
  for (let i = 0; i < buckets.length; i++) if ((buckets[i] as QuotaBucket).period === period) return i;
  return -1;
}

/** With `enabled` false every call is admitted while the store is away. */
export function createInsuranceLimiter(enabled: boolean, calendar: QuotaCalendar): InsuranceLimiter {
  const known = new PairCache<Counts>({ max: MAX_REMEMBERED });

  const current = (count: WindowCount, start: number): WindowCount => {
    if (count.start !== start) {
      count.start = start;
      count.stored = 0;
      count.unseen = 0;
    }
    return count;
  };

  const countsOf = (clientId: string, apiPath: string, minuteStart: number, dayStart: number): Counts => {
    let counts = known.get(clientId, apiPath);
    if (!counts) {
      counts = { minute: { start: minuteStart, stored: 0, unseen: 0 }, day: { start: dayStart, stored: 0, unseen: 0 } };
      known.set(clientId, apiPath, counts);
    }
    current(counts.minute, minuteStart);
    current(counts.day, dayStart);
    return counts;
  };

  /** Applies `change` to the request's minute and day windows, when it has both. */
  const onWindows = (request: ConsumeRequest, change: (minute: WindowCount, day: WindowCount, minuteAt: number, dayAt: number) => void): void => {
    if (!enabled) return;
    const { buckets } = request;
    const minute = periodIndex(buckets, 'minute');
    const day = periodIndex(buckets, 'day');
    if (minute === -1 || day === -1) return;
    const counts = countsOf(request.clientId, request.apiPath, (buckets[minute] as QuotaBucket).start, (buckets[day] as QuotaBucket).start);
    change(counts.minute, counts.day, minute, day);
  };

  // Answers arrive in any order: the highest count is the latest the store has seen.
  const store = (minute: WindowCount, day: WindowCount, used: readonly number[], minuteAt: number, dayAt: number) => {
    minute.stored = Math.max(minute.stored, used[minuteAt] ?? 0);
    day.stored = Math.max(day.stored, used[dayAt] ?? 0);
  };

  return {
    remember(request, used) {
      onWindows(request, (minute, day, minuteAt, dayAt) => store(minute, day, used, minuteAt, dayAt));
    },

    forget(clientId, apiPath) {
      known.delete(clientId, apiPath);
    },

    unanswered(request) {
      onWindows(request, (minute, day) => {
        minute.unseen += request.cost;
        day.unseen += request.cost;
      });
    },

    answeredLate(request, used) {
      onWindows(request, (minute, day, minuteAt, dayAt) => {
        minute.unseen = Math.max(0, minute.unseen - request.cost);
        day.unseen = Math.max(0, day.unseen - request.cost);
        store(minute, day, used, minuteAt, dayAt);
      });
    },

    decide(base, rule) {
      if (!enabled) return { ...base, rule, source: 'insurance', outcome: 'admitted', admitted: true, periods: [] };
      const [minuteWindow, dayWindow] = calendar.windows(base.now);
      const counts = countsOf(base.clientId, base.apiPath, minuteWindow.start, dayWindow.start);
      // Only limited periods are held and reported: the local counts of an unlimited one mean nothing.
      const buckets: QuotaBucket[] = [];
      const windows: WindowCount[] = [];
      if (rule.limits.minute > 0) {
        buckets.push(bucketOf(minuteWindow, rule));
        windows.push(counts.minute);
      }
      if (rule.limits.day > 0) {
        buckets.push(bucketOf(dayWindow, rule));
        windows.push(counts.day);
      }
      const used = windows.map((count) => count.stored + count.unseen);
      const admitted = buckets.every((bucket, i) => (used[i] as number) + rule.cost <= bucket.limit);
      if (admitted) {
        counts.minute.unseen += rule.cost;
        counts.day.unseen += rule.cost;
        for (let i = 0; i < used.length; i++) used[i] = (used[i] as number) + rule.cost;
      }
      const request: ConsumeRequest = { clientId: base.clientId, apiPath: base.apiPath, cost: rule.cost, buckets, now: base.now };
      return { ...decide(request, rule, { admitted, used }), source: 'insurance' };
    },
  };
}
