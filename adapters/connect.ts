import type { IncomingMessage, ServerResponse } from 'node:http';
import { isThenable, type MaybePromise } from '../src/core/maybe-promise.js';
import type { GuardVerdict } from '../src/guard/guard.js';
import { createPlatform, type Platform } from '../src/platform.js';
import type { CourierPlatformOptions } from '../src/options.js';
import type { QuotaIdentity } from '../src/quota/index.js';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import { requireGuard } from './guard.js';
import { fromNodeRequest, guardRequestOf, pathOf, socketAddress, writeNodeResponse, type ClientAddress } from './node.js';

type NextFunction = (error?: unknown) => void;
type Request = IncomingMessage & { body?: unknown; originalUrl?: string; platformAuth?: QuotaIdentity };
type Middleware = (req: Request, res: ServerResponse, next: NextFunction) => void;

export interface NodeMiddleware extends Middleware {
  /** The framework-neutral platform behind this middleware. */
  readonly platform: Platform;
  /**
   * Guards one of the host's OpenAPI routes with the quota: 401 without a valid Bearer token, 429
   * when a period is used up; otherwise the call goes on with `req.platformAuth` set and the
   * RateLimit headers on the response.
   */
  quota(apiPath?: string, doc?: GuardedRouteDoc): Middleware;
}

function follow(verdict: GuardVerdict, req: Request, res: ServerResponse, next: NextFunction): void {
  if (!verdict.pass) return writeNodeResponse(res, verdict.response);
  for (const name in verdict.headers) res.setHeader(name, verdict.headers[name] as string);
  // A plain property of this request alone, as express-rate-limit sets `req.rateLimit`.
  req.platformAuth = verdict.identity;
  next();
}

/**
 * Shared by the Connect and Express adapters: both hand over Node's own req/res. `addressOf` is
 * the framework's own client address (Connect has none: the socket's peer).
 */
export function nodeMiddleware(platform: Platform, addressOf: (req: Request) => ClientAddress = socketAddress): NodeMiddleware {
  const middleware = (req: Request, res: ServerResponse, next: NextFunction) => {
    const url = req.url ?? '/';
    if (!platform.owns(pathOf(url))) return next();
    platform.handle(fromNodeRequest(req, url, req.originalUrl, req.body, req, addressOf(req))).then((response) => {
      if (response) writeNodeResponse(res, response);
      else next();
    }, next);
  };
  const quota = (apiPath?: string, doc?: GuardedRouteDoc): Middleware => {
    const guard = requireGuard(platform, apiPath, doc);
    return (req, res, next) => {
      let verdict: MaybePromise<GuardVerdict>;
      try {
        // The quota counts the public path, whatever router the host mounted the route on.
        verdict = guard(guardRequestOf(req, req.originalUrl ?? req.url ?? '/'), apiPath);
      } catch (error) {
        return next(error);
      }
      // With memory stores the verdict is already here: the host's handler runs in this tick.
      if (isThenable(verdict)) verdict.then((settled) => follow(settled, req, res, next), next);
      else follow(verdict, req, res, next);
    };
  };
  return Object.assign(middleware, { platform, quota });
}

/**
 * Mounts the platform on a Connect app.
 *
 * @example
 * import connect from 'connect';
 * import { courierPlatform } from 'courier-platform/connect';
 * const app = connect();
 * app.use(courierPlatform({ courier: { upstreamUrl: 'https://courier.example/api' } }));
 */
export function courierPlatform(options?: CourierPlatformOptions<IncomingMessage>): NodeMiddleware {
  return nodeMiddleware(createPlatform(options));
}

export type { CourierPlatformOptions };
