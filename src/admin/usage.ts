/**
 * `{admin}/usage`: what an application used in the current periods, its endpoints in get_quota's
 * shape a page at a time in path order, and a reset (docs/operator.md#usage).
 */
import { z } from 'zod';
import { ok } from '../core/envelope.js';
import { NotFoundError, StoreUnavailableError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { StoreCall, StoreGuard } from '../core/store-guard.js';
import { API_PATH_PARAMETER, normalizeApiPath } from '../quota/api-path.js';
import { quotaReportSchema, type QuotaReport } from '../quota/report.js';
import type { QuotaService } from '../quota/service.js';
import type { QuotaUsageStore } from '../quota/store/types.js';
import type { AdminAccessCheck } from './access.js';
import { afterOf, cursorOf, pageCursor, pageLimit, pageResponse, pageResponseSchema } from './paging.js';
import { adminRoute, parseQuery, queryId } from './route.js';

export interface UsageDeps {
  logger: Logger;
  usage: QuotaUsageStore;
  quota: Pick<QuotaService, 'inspect' | 'forgetCounts'>;
  /** The quota's store guard: a failure or a late answer is a 503 (docs/errors.md), counted in the metrics like the guard's own calls. */
  storeGuard: Pick<StoreGuard, 'run'>;
  now: () => number;
  /** Whether an application has this id; absent when the quota's callers are not this platform's clients (a host's `quota.verifyToken`). */
  clientExists?: (clientId: string) => Promise<boolean>;
}

export const DEFAULT_USAGE_PAGE = 100;
export const MAX_USAGE_PAGE = 1000;
/**
 * Endpoints a page reads at once. On a shared store each read is a round trip or two (the rule,
 * the counts): a page of 1000 on Redis or PostgreSQL takes a third to a half of the time it takes
 * one after another. Fewer than a pg pool's 10 connections by default, which the page shares with
 * the guard's calls in arrival order (docs/stores.md#the-local-queue).
 */
export const USAGE_READS_AT_ONCE = 8;

const readQuery = z.strictObject({ client_id: queryId, limit: pageLimit(DEFAULT_USAGE_PAGE, MAX_USAGE_PAGE), cursor: pageCursor });
const readResponse = pageResponseSchema(z.object({ client_id: z.string(), endpoints: z.array(quotaReportSchema) }));
const resetQuery = z.strictObject({ client_id: queryId, api_path: z.string().min(1).refine(API_PATH_PARAMETER.valid, API_PATH_PARAMETER.problem).optional() });

/** Where the paths after `after` start in `sorted` (the cursor's path itself may be gone since). */
function firstAfter(sorted: readonly string[], after: string): number {
  const at = sorted.findIndex((path) => path > after);
  return at === -1 ? sorted.length : at;
}

/**
 * Time a page spends reading before it answers what it has. On a slow store a page of 1000 takes
 * minutes (two round trips an endpoint), and it would go on for an operator who gave up and asked
 * again, each such page taking its share of the pool from every guarded call: so a page stops
 * starting reads at this budget, and its `next_cursor` goes on from the last endpoint read.
 */
export const USAGE_PAGE_BUDGET_MS = 2000;

/**
 * `read` over the first items, at most `atOnce` in flight, until all are read or `budgetMs` has
 * passed (the reads in flight then finish); the answers of the first items read, in order, at
 * least one. The first failure rejects.
 */
export async function readWithin<T, R>(items: readonly T[], atOnce: number, budgetMs: number, read: (item: T) => Promise<R>): Promise<R[]> {
  const answers: R[] = [];
  const until = performance.now() + budgetMs;
  let next = 0;
  let failed = false;
  const reader = async () => {
    while (next < items.length && !failed && (next === 0 || performance.now() < until)) {
      const i = next++;
      try {
        answers[i] = await read(items[i] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, reader));
  // Every item taken was read to the end: the answers hold the first `next`.
  return answers.slice(0, next);
}

export function usageRoutes(basePath: string, access: AdminAccessCheck, deps: UsageDeps) {
  const stored = <T>(work: (call: StoreCall) => Promise<T>) => deps.storeGuard.run(work);

  return [
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/usage',
      doc: {
        operationId: 'admin_read_usage',
        summary: "An application's use of the endpoints it called in the current periods, a page at a time in path order",
        query: readQuery,
        responses: {
          200: {
            description: `\`{ client_id, endpoints }\`, each endpoint as get_quota's data, and \`next_cursor\` (null on the last page); ${DEFAULT_USAGE_PAGE} endpoints a page unless \`limit\` says (at most ${MAX_USAGE_PAGE})`,
            schema: readResponse,
          },
          400: { description: 'A parameter is invalid: `client_id`, `limit`, or a `cursor` this API did not give' },
          404: { description: 'No application has this id, and nothing is counted for it' },
        },
      },
      async handle(request) {
        const { client_id: clientId, limit, cursor } = parseQuery(request, readQuery);
        const after = cursor === undefined ? undefined : afterOf(cursor);
        const paths = await stored((call) => deps.usage.paths(clientId, deps.now(), call));
        // Counters outlive a deleted application until their periods end, so they are still shown.
        if (paths.length === 0 && deps.clientExists && !(await deps.clientExists(clientId))) {
          throw new NotFoundError(`No application ${JSON.stringify(clientId)}: no client has this id and nothing is counted for it`);
        }
        // The order the cursor compares in; stores answer in any order. Only the page is read: an application's users can
        // make its endpoints many (docs/quota.md), and each read is work, or a round trip.
        const sorted = [...paths].sort();
        const from = after === undefined ? 0 : firstAfter(sorted, after);
        const shown = sorted.slice(from, from + limit);
        const endpoints = await readWithin(shown, USAGE_READS_AT_ONCE, USAGE_PAGE_BUDGET_MS, async (path): Promise<QuotaReport> => {
          const inspection = await deps.quota.inspect(clientId, path);
          if (inspection.outcome !== 'ok') throw new StoreUnavailableError('quota store', inspection.error);
          return inspection.report;
        });
        const next = from + endpoints.length < sorted.length ? cursorOf(shown[endpoints.length - 1]!) : null;
        return pageResponse({ client_id: clientId, endpoints }, next);
      },
    }),
    adminRoute(basePath, access, {
      method: 'DELETE',
      path: '/usage',
      doc: {
        operationId: 'admin_reset_usage',
        summary: "Reset an application's counters, of one endpoint or of all",
        query: resetQuery,
        responses: { 200: { description: '`{ client_id, api_path, endpoints }`: how many endpoints had counters' } },
      },
      async handle(request) {
        const { client_id: clientId, api_path: rawPath } = parseQuery(request, resetQuery);
        const apiPath = rawPath === undefined ? undefined : normalizeApiPath(rawPath);
        const endpoints = await stored((call) => deps.usage.reset(clientId, apiPath, call));
        deps.quota.forgetCounts(clientId, apiPath);
        deps.logger.info({ clientId, apiPath: apiPath ?? '(all)', endpoints }, 'admin: quota usage reset');
        return ok({ client_id: clientId, api_path: apiPath ?? null, endpoints });
      },
    }),
  ];
}
