import { z } from 'zod';
import { errorEnvelope } from '../core/envelope.js';
import { PlatformError, UnauthorizedError } from '../core/errors.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { Route } from '../core/router.js';
import { parseWith } from '../core/validation.js';
import { bearerToken } from '../oauth/userinfo.js';
import { guardVerdict, MAX_API_PATH_LENGTH, quotaReportResponse, type QuotaIdentity, type QuotaService } from '../quota/index.js';

/** Who is calling: resolved from the Bearer access token, or undefined when it is not valid. */
export type TokenVerifier = (token: string) => Promise<QuotaIdentity | undefined>;

export type GuardVerdict =
  | { pass: true; headers: Record<string, string>; identity: QuotaIdentity }
  | { pass: false; response: PlatformResponse };

const INVALID_TOKEN = 'Bearer realm="openapi", error="invalid_token"';

async function identify(request: PlatformRequest, verify: TokenVerifier): Promise<QuotaIdentity> {
  const token = bearerToken(request);
  const identity = token ? await verify(token) : undefined;
  if (!identity) throw new UnauthorizedError('A valid Bearer access token is required (Authorization: Bearer <token>)', INVALID_TOKEN);
  return identity;
}

/**
 * The quota guard of the host's OpenAPI routes: validate the token, charge the endpoint's cost
 * from every period, and say whether the host's handler may run.
 */
export async function guardRequest(request: PlatformRequest, quota: QuotaService, verify: TokenVerifier, apiPath = request.path): Promise<GuardVerdict> {
  try {
    const identity = await identify(request, verify);
    const verdict = guardVerdict(await quota.consume(identity.clientId, apiPath));
    return verdict.pass ? { pass: true, headers: verdict.headers, identity } : verdict;
  } catch (error) {
    if (error instanceof PlatformError) return { pass: false, response: errorEnvelope(error) };
    throw error;
  }
}

// Other query parameters (a cache-buster, say) are ignored; the path limit is the guard's own.
const getQuotaQuery = z.object({ api_path: z.string().min(1).max(MAX_API_PATH_LENGTH) });

/** GET {basePath}/get_quota: what is left of one endpoint's quota; free and never counted. */
export function getQuotaRoute(basePath: string, quota: QuotaService, verify: TokenVerifier): Route {
  return {
    method: 'GET',
    path: `${basePath}/get_quota`,
    formatError: errorEnvelope,
    handler: async (request) => {
      const identity = await identify(request, verify);
      const { api_path: apiPath } = parseWith(getQuotaQuery, Object.fromEntries(request.query));
      return quotaReportResponse(await quota.inspect(identity.clientId, apiPath));
    },
  };
}
