/**
 * Usage history (docs/operator.md#usage-history): admitted and rejected guarded calls per
 * application, endpoint and UTC hour or day. The guard's process counts in memory
 * (recorder.ts); a flush hands the counts to a history store, which adds them to what every
 * other process sharing it wrote.
 */
import type { StoreCall } from '../core/store-guard.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export type HistoryStep = 'hour' | 'day';

/**
 * The path the calls of unnamed-guard paths past a process's first UNNAMED_PATHS_PER_HOUR of an
 * application's hour are counted under. Every api path starts with `/`, so this one is no endpoint's.
 */
export const OTHER_PATHS = '(other paths)';

/**
 * Paths of guards that name no endpoint that one process records by name, per application and
 * hour. Each is an endpoint (docs/quota.md), so without a bound an application's callers could
 * grow its history by one series per made-up path, and every read of it with them.
 */
export const UNNAMED_PATHS_PER_HOUR = 100;

/** How long points are kept, in days. */
export interface HistoryRetention {
  hourlyDays: number;
  dailyDays: number;
}

/** The calls of one application and endpoint in one UTC hour, as one process counted them. */
export interface HourCount {
  clientId: string;
  apiPath: string;
  /** Start of the UTC hour, ms. */
  hour: number;
  admitted: number;
  rejected: number;
}

/** One stored point: an hour's or a day's calls of one endpoint. */
export interface HistoryPoint {
  apiPath: string;
  step: HistoryStep;
  /** Start of the UTC hour or day, ms. */
  start: number;
  admitted: number;
  rejected: number;
}

export interface HistoryQuery {
  clientId: string;
  /** Normalised; every endpoint of the client when absent. */
  apiPath?: string;
  step: HistoryStep;
  /** Bucket starts from `from` (inclusive) to `to` (exclusive), UTC ms. */
  from: number;
  to: number;
}

/** Where the history lives: memory, Redis or PostgreSQL, the same place as the quota counters. */
export interface UsageHistoryStore {
  readonly kind: string;
  /**
   * Adds the hourly counts (each row's key unique in `counts`) to their hours and days, and
   * forgets what is older than the retention at `now`. One round trip where the store allows.
   */
  add(counts: readonly HourCount[], now: number, retention: HistoryRetention): Promise<void>;
  /**
   * Hands the stored points of the query's range to `onPoints`, a round trip's at a time, in no
   * particular order, and resolves once all are handed; buckets without calls may be missing,
   * and points of the same endpoint and bucket add up (a bucket may come in parts). A store that
   * reads in several round trips tells `call` as each is answered (roundTripAnswered), so the
   * deadline is the round trip's, and keeps each round trip small: `onPoints` folds the points
   * into the answer, and the process serves nothing else meanwhile (docs/stores.md#usage-history).
   * A store of one round trip may resolve with its points instead.
   */
  read(query: HistoryQuery, call: StoreCall | undefined, onPoints: (points: readonly HistoryPoint[]) => void): Promise<void | readonly HistoryPoint[]>;
}

export const stepMs = (step: HistoryStep): number => (step === 'hour' ? HOUR_MS : DAY_MS);

/** Start of the UTC hour or day that holds `ms` (UTC has no leap seconds in epoch ms). */
export const startOf = (step: HistoryStep, ms: number): number => ms - (ms % stepMs(step));

/** The first bucket start still kept at `now`. */
export function keptFrom(step: HistoryStep, now: number, retention: HistoryRetention): number {
  const days = step === 'hour' ? retention.hourlyDays : retention.dailyDays;
  return startOf(step, now) - days * DAY_MS;
}

/** The hourly counts and the daily sums they make, each key once. */
export function pointsOf(counts: readonly HourCount[]): (HistoryPoint & { clientId: string })[] {
  const days = new Map<string, HistoryPoint & { clientId: string }>();
  const out: (HistoryPoint & { clientId: string })[] = [];
  for (const count of counts) {
    const { clientId, apiPath, admitted, rejected } = count;
    out.push({ clientId, apiPath, step: 'hour', start: count.hour, admitted, rejected });
    const day = startOf('day', count.hour);
    const key = JSON.stringify([clientId, apiPath, day]);
    const sum = days.get(key);
    if (sum) {
      sum.admitted += admitted;
      sum.rejected += rejected;
    } else days.set(key, { clientId, apiPath, step: 'day', start: day, admitted, rejected });
  }
  out.push(...days.values());
  return out;
}
