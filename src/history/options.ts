/** `quota.history`: the usage history's retention and flush interval (docs/options.md). */
import { z } from 'zod';

/** Options of the usage history (`quota.history`); `false` switches it off. */
export interface HistoryOptions {
  /** Days hourly points are kept. Default 35. */
  hourlyDays?: number;
  /** Days daily points are kept. Default 400. */
  dailyDays?: number;
  /** How often each process writes what it counted, in ms (at most 9000, so calls show up within 10 s). Default 5000. */
  flushIntervalMs?: number;
}

const days = (fallback: number) => z.number().int().min(1).max(3660).default(fallback);

export const historyOptionsSchema = z
  .union(
    [
      z.literal(false),
      z.strictObject({
        hourlyDays: days(35),
        dailyDays: days(400),
        flushIntervalMs: z.number().int().min(10).max(9000).default(5000),
      }),
    ],
    { error: 'must be false or { hourlyDays?, dailyDays?, flushIntervalMs? }' },
  )
  .prefault({});
