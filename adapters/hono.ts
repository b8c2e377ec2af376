import type { Context, MiddlewareHandler } from 'hono';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import { createPlatform, type Platform } from '../src/platform.js';
import type { CourierPlatformOptions } from '../src/options.js';
import type { QuotaIdentity } from '../src/quota/index.js';
import { checkPrefix, fetchGuard, fromFetchRequest, platformPathOf, toFetchResponse, type FetchHostOptions } from './fetch.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `platform.quota()`: the calling application, its user and the granted scopes. */
    platformAuth: QuotaIdentity;
  }
}

/** A Hono `Env` for apps that type their variables themselves: `new Hono<PlatformEnv>()`. */
export interface PlatformEnv {
  Variables: { platformAuth: QuotaIdentity };
}

export interface HonoPlatform extends MiddlewareHandler {
  readonly platform: Platform;
  /**
   * Guards one of the host's OpenAPI routes with the quota: 401, 429 or 503 as the platform
   * answers them; otherwise the handler runs with `c.get('platformAuth')` and the RateLimit headers
   * on its response.
   */
  quota(apiPath?: string, doc?: GuardedRouteDoc): MiddlewareHandler;
}

/**
 * The body as the host's middleware left it: Hono caches what `c.req.json()` or
 * `c.req.parseBody()` read, and the request stream can be read only once.
 */
function hostReadBody(c: Context): (() => Promise<unknown>) | undefined {
  return c.req.raw.bodyUsed ? () => c.req.text() : undefined;
}

/**
 * Mounts the platform on a Hono app, on any runtime Hono runs on. Requests outside the
 * platform's paths go on to the app's own routes.
 *
 * @example
 * import { Hono } from 'hono';
 * import { courierPlatform } from 'courier-platform/hono';
 * const app = new Hono();
 * const platform = courierPlatform();
 * app.use(platform);
 * app.get('/openapi/v1/orders', platform.quota(), (c) => c.json({ app: c.get('platformAuth').clientId }));
 */
export function courierPlatform(options?: CourierPlatformOptions<Context>, host: FetchHostOptions = {}): HonoPlatform {
  const prefix = checkPrefix(host.prefix);
  const platform = createPlatform(options);
  const middleware: MiddlewareHandler = async (c, next) => {
    const at = platformPathOf(platform, c.req.url, prefix);
    if (!at) return next();
    const parsedBody = hostReadBody(c);
    const request = await fromFetchRequest(c.req.raw, at, { raw: c, info: c.env, prefix, ...(parsedBody ? { parsedBody } : {}) });
    const response = await platform.handle(request);
    if (!response) return next();
    return toFetchResponse(response, c.req.method === 'HEAD');
  };
  const quota = (apiPath?: string, doc?: GuardedRouteDoc): MiddlewareHandler => {
    const guard = fetchGuard(platform, apiPath, doc);
    return async (c, next) => {
      const verdict = await guard(c.req.raw, c, c.env);
      if (!verdict.pass) return verdict.response;
      c.set('platformAuth', verdict.identity);
      for (const name in verdict.headers) c.header(name, verdict.headers[name]);
      await next();
    };
  };
  return Object.assign(middleware, { platform, quota });
}

export type { CourierPlatformOptions };
