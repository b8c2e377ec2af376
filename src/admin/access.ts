/**
 * Who may call the admin API (docs/operator.md): a Bearer token equal to `admin.token`, or a
 * request the host's `admin.authorize` admits. No credentials is a 401; credentials that are wrong
 * or an operator check that says no is a 403. Writes from other sites' pages are refused first
 * (cross-site.ts); wrong tokens are limited per address and logged (failed-tokens.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ForbiddenError, HostCallbackError, TooManyFailuresError, UnauthorizedError } from '../core/errors.js';
import type { PlatformRequest } from '../core/http.js';
import type { Logger } from '../core/logger.js';
import { crossSiteCheck, type CrossSiteOptions } from './cross-site.js';
import { failedTokenLimit } from './failed-tokens.js';
import type { ResolvedAdminOptions } from './options.js';
import { countedAddress } from '../core/client-address.js';
import { bearerToken } from '../core/bearer.js';

const CHALLENGE = 'Bearer realm="admin"';

/** What a caller without credentials is told to bring: only what this platform accepts. */
function missingCredentials(options: Pick<ResolvedAdminOptions, 'token' | 'authorize'>): string {
  const session = "sign in to this site as an operator (the host's admin.authorize decides)";
  const token = 'send `Authorization: Bearer <admin token>`';
  if (options.token === undefined) return `The admin API needs an operator: ${session}`;
  if (!options.authorize) return `The admin API needs an operator: ${token}`;
  return `The admin API needs an operator: ${session}, or ${token}`;
}

// Digests of equal length, so the comparison takes the same time whatever the token's length.
const digest = (value: string) => createHash('sha256').update(value).digest();

export type AdminAccessCheck = (request: PlatformRequest) => Promise<void>;

export interface AdminAccessParts {
  logger: Logger;
  /** The caller's address, as the platform tells it (`clientIp`, else the peer). */
  clientIp(request: PlatformRequest): string;
  publicUrl: string | undefined;
}

export function adminAccess(
  options: Pick<ResolvedAdminOptions, 'token' | 'authorize' | 'allowedOrigins'>,
  { logger, clientIp, publicUrl }: AdminAccessParts,
): AdminAccessCheck {
  const expected = options.token === undefined ? undefined : digest(options.token);
  const sameSite = crossSiteCheck({ publicUrl, allowedOrigins: options.allowedOrigins } satisfies CrossSiteOptions);
  const failures = failedTokenLimit(logger);
  const hint = missingCredentials(options);
  return async (request) => {
    sameSite(request);
    const bearer = bearerToken(request);
    if (bearer !== undefined && expected) {
      // Counted as the OAuth limits count (docs/oauth.md#brute-force-limits).
      const address = countedAddress(clientIp(request));
      const attempt = await failures.reserve(address);
      const wait = attempt.retryAfter;
      if (wait > 0) throw new TooManyFailuresError(`Too many wrong admin tokens from this address; retry in ${wait} seconds`, wait);
      if (timingSafeEqual(digest(bearer), expected)) {
        await attempt.admitted();
        return;
      }
      attempt.failed();
      if (!options.authorize) throw new ForbiddenError('This token does not admit to the admin API');
    }
    if (options.authorize) {
      let decision: unknown;
      try {
        decision = await options.authorize(request.raw);
      } catch (error) {
        logger.error({ path: request.path, err: error }, 'admin.authorize threw; the admin request was answered with a 500');
        throw new HostCallbackError('The operator check of this site failed (admin.authorize threw); the server log has details.', error);
      }
      if (decision === true) return;
      if (decision === false || bearer !== undefined) throw new ForbiddenError('You may not use the admin API');
    }
    throw new UnauthorizedError(hint, CHALLENGE);
  };
}
