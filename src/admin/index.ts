/**
 * The admin API (docs/operator.md): one namespace under `admin.basePath`, every route behind the
 * operator check. Each concern keeps its routes in its own module; the parts that are off
 * (OAuth, quota) contribute none.
 */
import type { Registry } from 'prom-client';
import { adminErrorEnvelope } from './route.js';
import type { PlatformRequest } from '../core/http.js';
import type { Logger } from '../core/logger.js';
import type { Namespace, Route } from '../core/router.js';
import { adminAccess } from './access.js';
import { clientRoutes } from './clients.js';
import { consoleRoutes } from './console/routes.js';
import { grantRoutes } from './grants.js';
import { historyRoutes, type HistoryDeps } from './history.js';
import { metricsRoutes } from './metrics.js';
import { clientRulesRemover, ruleRoutes, type RulesDeps } from './rules.js';
import { usageRoutes, type UsageDeps } from './usage.js';
import type { ResolvedAdminOptions } from './options.js';
import type { OAuthClientAdmin } from '../oauth/setup.js';

export interface AdminParts {
  logger: Logger;
  /** The registry the platform's metrics are in. */
  registry: Registry;
  bodyLimit: number;
  now: () => number;
  /** The caller's address, as the platform tells it: wrong admin tokens are limited per address. */
  clientIp(request: PlatformRequest): string;
  /** `oauth.publicUrl`: the origin whose pages may write, besides the request's own Host. */
  publicUrl: string | undefined;
  /** Present while the OAuth server is on. */
  oauth?: {
    revokeGrants(grants: { sub: string; clientId: string }): Promise<number | undefined>;
    clients: OAuthClientAdmin;
  };
  /** Present while the quota is on and its store keeps rules. */
  quota?: Omit<RulesDeps, 'logger' | 'bodyLimit' | 'clientExists'>;
  /** Present while the quota is on and its store can list usage. */
  usage?: Omit<UsageDeps, 'logger' | 'now' | 'clientExists'>;
  /** Present while the quota is on with its usage history. */
  history?: Omit<HistoryDeps, 'clients' | 'now'>;
  /** The quota counts this platform's OAuth clients (no `quota.verifyToken` of the host's), so a rule or usage may be checked against them. */
  quotaCountsClients?: boolean;
}

export function createAdmin(options: ResolvedAdminOptions, parts: AdminParts): { namespace: Namespace; routes: Route[] } {
  const { basePath } = options;
  const access = adminAccess(options, parts);
  const routes: Route[] = [...metricsRoutes(basePath, access, parts.registry)];
  const { logger, bodyLimit, now } = parts;
  const clientStore = parts.oauth?.clients.store;
  const clientExists = clientStore && parts.quotaCountsClients ? { clientExists: async (id: string) => (await clientStore.getClient(id)) !== undefined } : {};
  if (parts.oauth) {
    routes.push(...grantRoutes(basePath, access, { logger, revokeGrants: parts.oauth.revokeGrants }));
    const removeRules = parts.quota && parts.quotaCountsClients ? { removeRules: clientRulesRemover(parts.quota) } : {};
    routes.push(...clientRoutes(basePath, access, { logger, bodyLimit, now, secretOverlapSeconds: options.secretOverlapSeconds, clients: parts.oauth.clients, ...removeRules }));
  }
  if (parts.quota) routes.push(...ruleRoutes(basePath, access, { ...parts.quota, logger, bodyLimit, ...clientExists }));
  if (parts.usage) routes.push(...usageRoutes(basePath, access, { ...parts.usage, logger, now, ...clientExists }));
  if (parts.history) routes.push(...historyRoutes(basePath, access, { ...parts.history, now, ...(parts.oauth ? { clients: parts.oauth.clients.store } : {}) }));
  routes.push(...consoleRoutes(basePath, { clients: parts.oauth !== undefined, rules: parts.quota !== undefined, usage: parts.usage !== undefined }));
  return { namespace: { prefix: basePath, formatError: adminErrorEnvelope }, routes };
}
