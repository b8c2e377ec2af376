/** What the usage history store tests share: hours, a retention, and counts to add. */
import type { StoreCall } from '../../src/core/store-guard.js';
import type { HistoryPoint, HistoryQuery, HourCount, UsageHistoryStore } from '../../src/history/types.js';
import type { QuotaStore } from '../../src/quota/index.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const RETENTION = { hourlyDays: 35, dailyDays: 400 };
/** 2031-05-31T22:00Z: the next hours cross a day and a month. */
export const T = Date.UTC(2031, 4, 31, 22);

export const count = (clientId: string, apiPath: string, hour: number, admitted: number, rejected = 0): HourCount => ({ clientId, apiPath, hour, admitted, rejected });
export const historyOf = (store: QuotaStore): UsageHistoryStore => store.history!;

/** What a read hands over, one point per endpoint and bucket (the parts of one added up). */
export async function readPoints(history: UsageHistoryStore, query: HistoryQuery, call?: StoreCall): Promise<HistoryPoint[]> {
  const points = new Map<string, HistoryPoint>();
  await history.read(query, call, (page) => {
    for (const point of page) {
      const key = `${point.step}:${point.start}:${point.apiPath}`;
      const known = points.get(key);
      if (known) {
        known.admitted += point.admitted;
        known.rejected += point.rejected;
      } else points.set(key, { ...point });
    }
  });
  return [...points.values()];
}
