/** What get_quota answers: the rule in force and every period's use, field names as on the wire. */
import { z } from 'zod';
import type { QuotaFailure } from './errors.js';
import { bucketOf, periodState } from './decision.js';
import { QUOTA_PERIODS, type PeriodWindow } from './periods.js';
import type { ResolvedQuotaRule } from './rules.js';

/** `data` of get_quota; the API document shows the same schema. */
export const quotaReportSchema = z.object({
  api_path: z.string(),
  scope: z.enum(['client', 'global', 'system']),
  cost: z.number().int(),
  periods: z.array(
    z.object({
      period: z.enum(QUOTA_PERIODS),
      limit: z.number().int().meta({ description: '0 when unlimited' }),
      used: z.number().int(),
      remaining: z.number().int().meta({ description: '-1 when unlimited' }),
      unlimited: z.boolean(),
      reset_at: z.iso.datetime(),
    }),
  ),
});

export type QuotaReport = z.infer<typeof quotaReportSchema>;

export type QuotaInspection =
  | { outcome: 'ok'; report: QuotaReport; now: number; /** The envelope's `time`, ISO 8601 UTC. */ time: string }
  | { outcome: 'store_unavailable'; apiPath: string; now: number; time: string; error: QuotaFailure };

/** The report of `rule` over `windows`, `used[i]` being what the store counted in `windows[i]`. */
export function quotaReport(apiPath: string, rule: ResolvedQuotaRule, windows: readonly PeriodWindow[], used: readonly number[]): QuotaReport {
  return {
    api_path: apiPath,
    scope: rule.scope,
    cost: rule.cost,
    periods: windows.map((window, i) => {
      const state = periodState(bucketOf(window, rule), used[i] ?? 0);
      return {
        period: state.period,
        limit: state.limit,
        used: state.used,
        remaining: state.remaining,
        unlimited: state.unlimited,
        reset_at: new Date(state.resetAt).toISOString(),
      };
    }),
  };
}
