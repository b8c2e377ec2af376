/**
 * Quota events for the host's `onEvent` (docs/operator.md#events). A threshold event comes from
 * the counts the store answered atomically: the one call that moves a period's count across 80 %
 * (or 100 %) of its limit reports it, so each crossing is reported once per period, whatever the
 * number of processes.
 */
import type { QuotaPeriod } from './periods.js';
import type { ConsumeRequest, ConsumeResult } from './store/types.js';

export interface QuotaEvent {
  type: 'quota.threshold' | 'quota.exceeded';
  clientId: string;
  apiPath: string;
  period: QuotaPeriod;
  limit: number;
  /** The period's count after the call (for `quota.exceeded`: unchanged, the call was refused). */
  used: number;
  /** `quota.threshold`: 80 or 100 (percent of the limit crossed). */
  threshold?: 80 | 100;
  /** Milliseconds since the epoch. */
  at: number;
}

export type EmitQuotaEvent = (event: Omit<QuotaEvent, 'at'>) => void;

const THRESHOLDS = [80, 100] as const;

export function quotaEvents(request: ConsumeRequest, result: ConsumeResult): Omit<QuotaEvent, 'at'>[] {
  const { clientId, apiPath, cost } = request;
  const events: Omit<QuotaEvent, 'at'>[] = [];
  request.buckets.forEach((bucket, i) => {
    const { limit, period } = bucket;
    if (limit === 0) return; // unlimited
    const used = result.used[i] ?? 0;
    if (!result.admitted) {
      if (used + cost > limit) events.push({ type: 'quota.exceeded', clientId, apiPath, period, limit, used });
      return;
    }
    const before = used - cost;
    for (const threshold of THRESHOLDS) {
      const mark = (limit * threshold) / 100;
      if (before < mark && used >= mark) events.push({ type: 'quota.threshold', clientId, apiPath, period, limit, used, threshold });
    }
  });
  return events;
}
