/**
 * `{admin}/usage/history`: an application's admitted and rejected guarded calls per endpoint,
 * by UTC hour or day (docs/operator.md#usage-history).
 */
import { z } from 'zod';
import { ok, okEnvelopeSchema } from '../core/envelope.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { StoreGuard } from '../core/store-guard.js';
import type { OAuthStore } from '../oauth/store/types.js';
import { bucketStarts, foldSeries, MAX_HISTORY_SERIES } from '../history/series.js';
import { DAY_MS, keptFrom, startOf, stepMs, type HistoryRetention, type UsageHistoryStore } from '../history/types.js';
import { API_PATH_PARAMETER, normalizeApiPath } from '../quota/api-path.js';
import type { AdminAccessCheck } from './access.js';
import { adminRoute, parseQuery, queryId } from './route.js';

/** Points one answer holds at most, per endpoint: 41 days by the hour, 2.7 years by the day. */
export const MAX_HISTORY_POINTS = 1000;

export interface HistoryDeps {
  history: UsageHistoryStore;
  retention: HistoryRetention;
  /** Present while the OAuth server is on: an unknown client is a 404. */
  clients?: Pick<OAuthStore, 'getClient'>;
  /** The quota store's deadline and outage guard (docs/quota.md). */
  storeGuard: Pick<StoreGuard, 'run'>;
  now: () => number;
}

const instant = z.union([z.iso.datetime({ offset: true }), z.iso.date()], { error: 'must be an ISO 8601 date or date-time, e.g. 2026-01-31T00:00:00Z' });

const historyQuery = z.strictObject({
  client_id: queryId,
  api_path: z.string().min(1).refine(API_PATH_PARAMETER.valid, API_PATH_PARAMETER.problem).optional(),
  step: z.enum(['hour', 'day']).default('hour'),
  from: instant.optional(),
  to: instant.optional(),
});

const pointSchema = z.object({ at: z.string(), admitted: z.number().int(), rejected: z.number().int() });
const historySchema = z.object({
  client_id: z.string(),
  step: z.enum(['hour', 'day']),
  series: z.array(z.object({ api_path: z.string(), points: z.array(pointSchema) })),
  other: z.object({ endpoints: z.number().int(), points: z.array(pointSchema) }).nullable(),
});

const badField = (field: string, message: string) => new ValidationError([{ field, rule: 'custom', message }]);

export function historyRoutes(basePath: string, access: AdminAccessCheck, deps: HistoryDeps) {
  return [
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/usage/history',
      doc: {
        operationId: 'admin_usage_history',
        summary: "An application's admitted and rejected (429) guarded calls per endpoint, by UTC hour or day",
        description:
          `Default: the last 24 hours by hour (\`step=day\`: the last 30 days). Every bucket overlapping [from, to) is a point, zero when no call came; ` +
          `at most ${MAX_HISTORY_POINTS} points per endpoint. Buckets older than the retention are left out. ` +
          `Without \`api_path\`, at most ${MAX_HISTORY_SERIES} endpoints, those with the most calls; \`other\` sums the calls of the rest (null when none is left out).`,
        query: historyQuery,
        responses: {
          200: { description: '`{ client_id, step, series: [{ api_path, points: [{ at, admitted, rejected }] }], other: { endpoints, points } | null }`', schema: okEnvelopeSchema(historySchema) },
          400: { description: 'A bad query parameter, `from` not before `to`, or more points than allowed' },
          404: { description: 'No such client' },
          503: { description: 'The history store is unavailable' },
        },
      },
      async handle(request) {
        const query = parseQuery(request, historyQuery);
        const apiPath = query.api_path === undefined ? undefined : normalizeApiPath(query.api_path);
        const now = deps.now();
        const to = query.to === undefined ? now : Date.parse(query.to);
        const from = query.from === undefined ? to - (query.step === 'hour' ? DAY_MS : 30 * DAY_MS) : Date.parse(query.from);
        if (!(from < to)) throw badField('from', 'must be before to');
        const asked = Math.ceil((to - startOf(query.step, from)) / stepMs(query.step));
        if (asked > MAX_HISTORY_POINTS) {
          const most = `${Math.floor((MAX_HISTORY_POINTS * stepMs(query.step)) / DAY_MS)} days`;
          throw badField('from', `the range holds ${asked} ${query.step === 'hour' ? 'hourly' : 'daily'} points; at most ${MAX_HISTORY_POINTS} (${most})`);
        }
        const starts = bucketStarts(query.step, Math.max(from, keptFrom(query.step, now, deps.retention)), to);
        if (deps.clients && !(await deps.clients.getClient(query.client_id))) throw new NotFoundError(`No client ${JSON.stringify(query.client_id)}`);
        const first = starts[0];
        const answer = foldSeries(query.step, starts, apiPath);
        if (first !== undefined) {
          const points = await deps.storeGuard.run((call) => deps.history.read({ clientId: query.client_id, apiPath, step: query.step, from: first, to }, call, answer.add));
          if (points) answer.add(points);
        }
        return ok({ client_id: query.client_id, step: query.step, ...answer.finish() });
      },
    }),
  ];
}
