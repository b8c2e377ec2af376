/**
 * The host's own guarded routes in the API document: the host says what its route takes and
 * answers, the platform adds what its guard answers (401, 429, 503) and the quota headers.
 */
import { z } from 'zod';
import { envelopeError } from '../core/envelope.js';
import { configurationError } from '../core/errors.js';
import type { RouteDoc, RouteResponseDoc } from '../core/route-doc.js';
import type { DocumentedRoute } from '../openapi/document.js';

/** What `platform.quota(apiPath, doc)` says of the host's route. */
export interface GuardedRouteDoc extends Omit<RouteDoc, 'tag' | 'security' | 'credentialsOptional'> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Default `openapi`. */
  tag?: string;
}

const quotaExceededData = z.object({ api_path: z.string(), period: z.enum(['minute', 'day', 'month']), reset_at: z.iso.datetime() });

const GUARD_RESPONSES: Readonly<Record<number, RouteResponseDoc>> = {
  401: envelopeError('No valid Bearer access token', ['WWW-Authenticate']),
  429: envelopeError("A period of the endpoint's quota is used up", ['Retry-After', 'RateLimit-Policy', 'RateLimit'], quotaExceededData),
  503: envelopeError("The quota store is unavailable and `quota.onStoreError` is 'closed'", ['Retry-After']),
};

/** Every answer the host's handler gives carries the quota headers (absent only when nothing is limited). */
function withQuotaHeaders(response: RouteResponseDoc): RouteResponseDoc {
  return { ...response, headers: [...new Set([...(response.headers ?? []), 'RateLimit-Policy' as const, 'RateLimit' as const])] };
}

/** The routes the host described, as the document lists them; one description per method and path. */
export function guardedRoutes() {
  const routes: DocumentedRoute[] = [];
  return {
    list: (): readonly DocumentedRoute[] => routes,
    add(apiPath: string | undefined, doc: GuardedRouteDoc): void {
      if (apiPath === undefined) throw configurationError('invalid_argument', 'apiPath', 'quota(apiPath, doc) needs the path the document lists the route under');
      if (routes.some((route) => route.method === doc.method && route.path === apiPath)) {
        throw configurationError('invalid_argument', 'apiPath', `${doc.method} ${apiPath} is described twice`);
      }
      const { method, tag, ...described } = doc;
      const responses = Object.fromEntries(Object.entries(described.responses).map(([status, response]) => [status, withQuotaHeaders(response)]));
      routes.push({ method, path: apiPath, fromRoot: true, doc: { ...described, tag: tag ?? 'openapi', security: ['bearer'], responses: { ...responses, ...GUARD_RESPONSES } } });
    },
  };
}
