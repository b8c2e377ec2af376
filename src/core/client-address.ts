/**
 * The caller's address for the brute-force limits (docs/deployment.md#clientip): the host's
 * `clientIp` option when it answers, else the address the adapter resolved (Express `req.ip`,
 * Koa `ctx.ip`, the socket's peer address).
 */
import { header, type PlatformRequest } from './http.js';
import type { Logger } from './logger.js';

/** Once per process, as express-rate-limit's `xForwardedForHeader` validation runs once. */
let warned = false;

function forwardedHeaderOf(request: PlatformRequest): string | undefined {
  if (header(request, 'x-forwarded-for') !== undefined) return 'X-Forwarded-For';
  if (header(request, 'forwarded') !== undefined) return 'Forwarded';
  return undefined;
}

export function clientAddress(
  chosen: ((request: PlatformRequest) => string | undefined) | undefined,
  logger: Logger,
): (request: PlatformRequest) => string {
  if (chosen) return (request) => chosen(request) ?? request.ip ?? 'unknown';
  return (request) => {
    if (!warned && !request.proxyTrusted) {
      const forwarded = forwardedHeaderOf(request);
      if (forwarded) {
        warned = true;
        // Behind a proxy every caller would share the proxy's address, and one guesser's failures
        // would slow them all.
        logger.warn(
          { header: forwarded, address: request.ip },
          `a request came through a proxy (${forwarded}), but the brute-force limits count the connection's address, the proxy's: set the clientIp option, or let the framework trust the proxy (Express 'trust proxy', Koa app.proxy); see docs/deployment.md`,
        );
      }
    }
    return request.ip ?? 'unknown';
  };
}
