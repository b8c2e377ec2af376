/**
 * One admin route: the operator check first, then the handler; errors in the envelope. Route
 * modules (clients, rules, usage, grants, metrics) describe their routes with `adminRoute` so the
 * check cannot be forgotten.
 */
import type { z } from 'zod';
import { errorEnvelope } from '../core/envelope.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { RouteDoc } from '../core/route-doc.js';
import type { Route, RouteParams } from '../core/router.js';
import { parseWith } from '../core/validation.js';
import type { AdminAccessCheck } from './access.js';

export interface AdminRouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to the admin base path: `/clients/:id`. */
  path: string;
  doc: Omit<RouteDoc, 'tag' | 'security'>;
  handle(request: PlatformRequest, params: RouteParams): Promise<PlatformResponse>;
}

export function adminRoute(basePath: string, access: AdminAccessCheck, spec: AdminRouteSpec): Route {
  return {
    method: spec.method,
    path: `${basePath}${spec.path}`,
    formatError: errorEnvelope,
    doc: { ...spec.doc, tag: 'admin', security: ['adminBearer'] },
    async handler(request, params) {
      await access(request);
      return spec.handle(request, params);
    },
  };
}

/** The query string as an object, checked by `schema` (a 400 naming the parameter otherwise). */
export function parseQuery<S extends z.ZodType>(request: PlatformRequest, schema: S): z.output<S> {
  return parseWith(schema, Object.fromEntries(request.query)) as z.output<S>;
}
