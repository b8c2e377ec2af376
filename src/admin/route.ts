/**
 * One admin route: the operator check first, then the handler; errors in the envelope. Route
 * modules (clients, rules, usage, grants, metrics) describe their routes with `adminRoute` so the
 * check cannot be forgotten.
 */
import { z } from 'zod';
import { CONTROL_CHARACTERS_PROBLEM, NO_CONTROL_CHARACTERS } from '../core/control-characters.js';
import { envelopeError, errorEnvelope, failureEnvelopeSchema, okEnvelopeSchema } from '../core/envelope.js';
import type { PlatformError } from '../core/errors.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { RouteDoc, RouteResponseDoc } from '../core/route-doc.js';
import type { Route, RouteParams } from '../core/router.js';
import { parseWith, queryObject } from '../core/validation.js';
import type { AdminAccessCheck } from './access.js';

export interface AdminRouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to the admin base path: `/clients/:id`. */
  path: string;
  doc: Omit<RouteDoc, 'tag' | 'security' | 'credentialsOptional'>;
  handle(request: PlatformRequest, params: RouteParams): Promise<PlatformResponse>;
}

/** Operator data and secrets shown once: no browser or shared cache keeps an answer (RFC 9111 5.2.2.5). */
function notStored(response: PlatformResponse): PlatformResponse {
  return { ...response, headers: { ...response.headers, 'cache-control': 'no-store' } };
}

/** The admin API's errors, its 404 and 405 too: the envelope, never stored (a 404 is cacheable by default, RFC 9111 4.2.2). */
export const adminErrorEnvelope = (error: PlatformError): PlatformResponse => notStored(errorEnvelope(error));

/** The operator check answers these on every admin route. */
const ACCESS_ERRORS: Readonly<Record<number, RouteResponseDoc>> = {
  401: envelopeError('No operator credentials', ['WWW-Authenticate']),
  403: envelopeError('A wrong token, `admin.authorize` said no, or (a write) the request came from another site'),
  429: envelopeError('Too many wrong tokens from this address', ['Retry-After']),
};

/** And these on writes (cross-site.ts). */
const WRITE_ERRORS: Readonly<Record<number, RouteResponseDoc>> = {
  415: envelopeError('A body that is not JSON'),
};

/** A response described in words only is the envelope (the metrics, in another format, say so). */
function inEnvelope(status: number, response: RouteResponseDoc): RouteResponseDoc {
  if (response.schema || response.contentType) return response;
  return { ...response, schema: status < 400 ? okEnvelopeSchema(z.unknown()) : failureEnvelopeSchema(z.unknown()) };
}

export function adminRoute(basePath: string, access: AdminAccessCheck, spec: AdminRouteSpec): Route {
  const errors = spec.method === 'GET' ? ACCESS_ERRORS : { ...WRITE_ERRORS, ...ACCESS_ERRORS };
  const responses = Object.fromEntries(Object.entries({ ...spec.doc.responses, ...errors }).map(([status, response]) => [status, inEnvelope(Number(status), response)]));
  return {
    method: spec.method,
    path: `${basePath}${spec.path}`,
    formatError: adminErrorEnvelope,
    doc: { ...spec.doc, responses, tag: 'admin', security: ['adminBearer'] },
    async handler(request, params) {
      await access(request);
      return notStored(await spec.handle(request, params));
    },
  };
}

/**
 * An id in an admin query (`client_id`, `sub`): text a store can hold. PostgreSQL text cannot hold
 * a NUL, and no id has control characters: refused with a 400 naming the parameter, rather than
 * sent to a store that would answer an error (a 503, and an outage logged for a healthy store).
 */
export const queryId = z.string().min(1).regex(NO_CONTROL_CHARACTERS, CONTROL_CHARACTERS_PROBLEM);

/** The query string as an object, checked by `schema` (a 400 naming the parameter otherwise, or one given twice). */
export function parseQuery<S extends z.ZodType>(request: PlatformRequest, schema: S): z.output<S> {
  return parseWith(schema, queryObject(request.query)) as z.output<S>;
}
