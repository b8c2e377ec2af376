/**
 * `{admin}/usage`: what an application used in the current periods, every endpoint in
 * get_quota's shape, and a reset (docs/operator.md#usage).
 */
import { z } from 'zod';
import { ok } from '../core/envelope.js';
import { NotFoundError, StoreUnavailableError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { StoreGuard } from '../core/store-guard.js';
import { normalizeApiPath } from '../quota/api-path.js';
import type { QuotaService } from '../quota/service.js';
import type { QuotaUsageStore } from '../quota/store/types.js';
import type { AdminAccessCheck } from './access.js';
import { adminRoute, parseQuery, queryId } from './route.js';

export interface UsageDeps {
  logger: Logger;
  usage: QuotaUsageStore;
  quota: Pick<QuotaService, 'inspect'>;
  /** The quota's store guard: a failure or a late answer is a 503 (docs/errors.md), counted in the metrics like the guard's own calls. */
  storeGuard: Pick<StoreGuard, 'run'>;
  now: () => number;
  /** Whether an application has this id; absent when the quota's callers are not this platform's clients (a host's `quota.verifyToken`). */
  clientExists?: (clientId: string) => Promise<boolean>;
}

const readQuery = z.strictObject({ client_id: queryId });
const resetQuery = z.strictObject({ client_id: queryId, api_path: z.string().min(1).optional() });

export function usageRoutes(basePath: string, access: AdminAccessCheck, deps: UsageDeps) {
  const stored = <T>(work: () => Promise<T>) => deps.storeGuard.run(work);

  return [
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/usage',
      doc: {
        operationId: 'admin_read_usage',
        summary: "An application's use of every endpoint it called in the current periods",
        query: readQuery,
        responses: {
          200: { description: "`{ client_id, endpoints }`, each endpoint as get_quota's data" },
          404: { description: 'No application has this id, and nothing is counted for it' },
        },
      },
      async handle(request) {
        const { client_id: clientId } = parseQuery(request, readQuery);
        const paths = await stored(() => deps.usage.paths(clientId, deps.now()));
        // Counters outlive a deleted application until their periods end, so they are still shown.
        if (paths.length === 0 && deps.clientExists && !(await deps.clientExists(clientId))) {
          throw new NotFoundError(`No application ${JSON.stringify(clientId)}: no client has this id and nothing is counted for it`);
        }
        const endpoints = [];
        for (const path of paths) {
          const inspection = await deps.quota.inspect(clientId, path);
          if (inspection.outcome !== 'ok') throw new StoreUnavailableError('quota store', inspection.error);
          endpoints.push(inspection.report);
        }
        return ok({ client_id: clientId, endpoints });
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
        const endpoints = await stored(() => deps.usage.reset(clientId, apiPath));
        deps.logger.info({ clientId, apiPath: apiPath ?? '(all)', endpoints }, 'admin: quota usage reset');
        return ok({ client_id: clientId, api_path: apiPath ?? null, endpoints });
      },
    }),
  ];
}
