import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import { createPlatform, type Platform } from '../src/platform.js';
import type { CourierPlatformOptions } from '../src/options.js';
import type { QuotaIdentity } from '../src/quota/index.js';
import { nodeMiddleware } from './connect.js';
import type { ClientAddress } from './node.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `platform.quota()`: the calling application, its user and the granted scopes. */
      platformAuth?: QuotaIdentity;
    }
  }
}

export interface ExpressPlatform extends RequestHandler {
  readonly platform: Platform;
  /**
   * Guards one of the host's OpenAPI routes with the quota. The endpoint counted is the request's
   * path, or `apiPath` when given: name it for parameterised routes so every id shares one quota.
   * With `doc`, the route is listed in the API document under `apiPath` (docs/api-document.md).
   *
   * @example
   * const platform = courierPlatform();
   * app.use(platform);
   * app.get('/openapi/v1/orders', platform.quota(), (req, res) => res.json({ app: req.platformAuth?.clientId }));
   * app.get('/openapi/v1/orders/:id', platform.quota('/openapi/v1/orders/:id'), handler);
   */
  quota(apiPath?: string, doc?: GuardedRouteDoc): RequestHandler;
}

/**
 * Mounts the platform on an Express 4 or 5 app. Requests outside the platform's paths go on to
 * the host's own routes untouched.
 *
 * @example
 * import express from 'express';
 * import { courierPlatform } from 'courier-platform/express';
 * const app = express();
 * app.use(courierPlatform({ courier: { credentials: { appId: 'my-app', appSecret: process.env.COURIER_SECRET! } } }));
 */
export function courierPlatform(options?: CourierPlatformOptions<Request>): ExpressPlatform {
  return nodeMiddleware(createPlatform(options), expressAddress) as unknown as ExpressPlatform;
}

/** `req.ip` reads X-Forwarded-For only as far as the app's `trust proxy` setting allows. */
function expressAddress(req: IncomingMessage): ClientAddress {
  const { ip, app } = req as Request;
  return { ip, proxyTrusted: app.enabled('trust proxy') };
}

export type { CourierPlatformOptions };
