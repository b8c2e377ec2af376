import { z } from 'zod';
import { envelopeError, errorEnvelope, fieldErrorsSchema, okEnvelopeSchema } from '../core/envelope.js';
import { PlatformError, StoreUnavailableError, UnauthorizedError } from '../core/errors.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import { isThenable, type MaybePromise } from '../core/maybe-promise.js';
import type { Route } from '../core/router.js';
import { noTelemetry, type Telemetry } from '../core/telemetry.js';
import { parseWith, queryObject } from '../core/validation.js';
import { bearerToken } from '../core/bearer.js';
import { API_PATH_PARAMETER, hasDotSegment, readApiPath } from '../quota/api-path.js';
import {
  guardVerdict,
  MAX_API_PATH_LENGTH,
  quotaReportResponse,
  quotaReportSchema,
  type QuotaDecision,
  type QuotaIdentity,
  type QuotaService,
  type TokenVerifier,
} from '../quota/index.js';

export type { TokenVerifier };

export type GuardVerdict =
  | { pass: true; headers: Record<string, string>; identity: QuotaIdentity }
  | { pass: false; response: PlatformResponse };

/**
 * RFC 6750 3.1: a request without Bearer credentials gets the challenge alone; one whose token is
 * malformed, unknown, expired or revoked gets `invalid_token` (docs/errors.md).
 */
function unauthorized(tokenSent: boolean): UnauthorizedError {
  const challenge = tokenSent ? 'Bearer realm="openapi", error="invalid_token"' : 'Bearer realm="openapi"';
  return new UnauthorizedError('A valid Bearer access token is required (Authorization: Bearer <token>)', challenge);
}

/** A request without Bearer credentials (a host's check may answer `null` for a bad token). */
const NO_CREDENTIALS = Symbol('no credentials');
type Caller = QuotaIdentity | undefined | typeof NO_CREDENTIALS;

/** Who is calling, undefined for a token that is not valid. At once when the check answers at once. */
function identityOf(request: PlatformRequest, verify: TokenVerifier): MaybePromise<Caller> {
  const token = bearerToken(request);
  if (token === undefined) return NO_CREDENTIALS;
  return token ? verify(token) : undefined;
}

/** A platform error becomes its envelope answer; anything else is a bug and goes on to the host. */
function refusal(error: unknown): GuardVerdict {
  if (error instanceof PlatformError) return { pass: false, response: errorEnvelope(error) };
  // `next(undefined)` would read as "no error" and run the host's handler unguarded.
  throw error || new Error(`quota guard: the token check or the quota failed with ${String(error)}`);
}

/**
 * The token check could not answer (its store is down or late): 503 whatever `quota.onStoreError`
 * says. `'open'` admits calls the quota cannot count, but without the token no application is
 * known to admit, and the host's handler must never run for an unidentified caller.
 */
function tokenCheckError(error: unknown): PlatformError {
  return error instanceof PlatformError ? error : new StoreUnavailableError('token check', error);
}

const tokenCheckFailed = (error: unknown): GuardVerdict => refusal(tokenCheckError(error));

/** Where the call is counted: the guard's `apiPath` when it names one, else the request's path. */
interface Endpoint {
  apiPath: string;
  named: boolean;
}

/**
 * Whether the endpoint is one the host or the operator named: by the guard's `apiPath`, or by a
 * client or global rule for the path. Only the other paths a guard counts can be made up by its
 * callers, so only they are bounded in the usage history and the metrics (docs/quota.md).
 */
const isNamed = (decision: QuotaDecision, endpoint: Endpoint): boolean => endpoint.named || (decision.rule !== undefined && decision.rule.scope !== 'system');

function verdictOf(decision: QuotaDecision, identity: QuotaIdentity, endpoint: Endpoint, telemetry: Telemetry): GuardVerdict {
  telemetry.guardedCall(identity.clientId, decision.apiPath, decision.outcome === 'store_unavailable' ? 'store_error' : decision.outcome, isNamed(decision, endpoint));
  const verdict = guardVerdict(decision);
  return verdict.pass ? { pass: true, headers: verdict.headers, identity } : verdict;
}

function charge(identity: Caller, quota: QuotaService, endpoint: Endpoint, telemetry: Telemetry): MaybePromise<GuardVerdict> {
  if (identity === NO_CREDENTIALS || !identity) return refusal(unauthorized(identity !== NO_CREDENTIALS));
  const decision = quota.consume(identity.clientId, endpoint.apiPath);
  return isThenable(decision) ? decision.then((d) => verdictOf(d, identity, endpoint, telemetry), refusal) : verdictOf(decision, identity, endpoint, telemetry);
}

/**
 * The quota guard of the host's OpenAPI routes: validate the token, charge the endpoint's cost
 * from every period, and say whether the host's handler may run. Synchronous when the token
 * check and the quota store are (memory stores), so the host's handler runs in the same tick;
 * a promise otherwise. Throws (or rejects) only for a bug, never for a caller's or store's fault.
 */
export function guardRequest(
  request: PlatformRequest,
  quota: QuotaService,
  verify: TokenVerifier,
  apiPath?: string,
  telemetry: Telemetry = noTelemetry,
): MaybePromise<GuardVerdict> {
  const endpoint: Endpoint = { apiPath: apiPath ?? request.path, named: apiPath !== undefined };
  let identity: MaybePromise<Caller>;
  try {
    identity = identityOf(request, verify);
  } catch (error) {
    return tokenCheckFailed(error);
  }
  if (isThenable(identity)) return identity.then((id) => charge(id, quota, endpoint, telemetry), tokenCheckFailed);
  try {
    return charge(identity, quota, endpoint, telemetry);
  } catch (error) {
    return refusal(error);
  }
}

// Other query parameters (a cache-buster, say) are ignored; the path limit is the guard's own. A
// path with `.` or `..` segments names no endpoint a call can reach (docs/quota.md).
const getQuotaQuery = z.object({
  api_path: z
    .string()
    .min(1)
    .max(MAX_API_PATH_LENGTH)
    .refine(API_PATH_PARAMETER.valid, API_PATH_PARAMETER.problem)
    .refine((path) => {
      const read = readApiPath(path);
      return !('path' in read) || !hasDotSegment(read.path);
    }, { message: 'must not hold . or .. segments' }),
});

/** GET {basePath}/get_quota: what is left of one endpoint's quota; free and never counted. */
export function getQuotaRoute(basePath: string, quota: QuotaService, verify: TokenVerifier): Route {
  return {
    method: 'GET',
    path: `${basePath}/get_quota`,
    formatError: errorEnvelope,
    doc: {
      operationId: 'get_quota',
      summary: "What is left of one endpoint's quota for the token's application; free and never counted",
      tag: 'quota',
      security: ['bearer'],
      query: getQuotaQuery,
      responses: {
        200: { description: 'The rule in force and every period', schema: okEnvelopeSchema(quotaReportSchema) },
        400: envelopeError('`api_path` is missing or malformed', undefined, fieldErrorsSchema),
        401: envelopeError('No valid Bearer access token', ['WWW-Authenticate']),
        503: envelopeError('The quota store or the token check cannot be read; try again', ['Retry-After']),
      },
    },
    handler: async (request) => {
      const identity = await Promise.resolve()
        .then(() => identityOf(request, verify))
        .catch((error: unknown) => {
          throw tokenCheckError(error);
        });
      if (identity === NO_CREDENTIALS || !identity) throw unauthorized(identity !== NO_CREDENTIALS);
      const { api_path: apiPath } = parseWith(getQuotaQuery, queryObject(request.query));
      return quotaReportResponse(await quota.inspect(identity.clientId, apiPath));
    },
  };
}
