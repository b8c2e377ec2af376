import type { Context, MiddlewareHandler, Next } from 'hono';
import { isThenable } from '../src/core/maybe-promise.js';
import type { GuardVerdict } from '../src/guard/guard.js';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import { createPlatform, type Platform } from '../src/platform.js';
import type { CourierPlatformOptions } from '../src/options.js';
import type { QuotaIdentity } from '../src/quota/index.js';
import { checkPrefix, fetchRequestGuard, fromFetchRequest, platformPathOf, toFetchResponse, type FetchHostOptions, type PlatformPath } from './fetch.js';

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
  let used = false;
  try {
    used = c.req.raw.bodyUsed;
  } catch {
    // @hono/node-server could not build the Request (a Host no URL holds): nothing has read it.
  }
  return used ? () => c.req.text() : undefined;
}

interface NodeResponse {
  setHeader(name: string, value: string): unknown;
}

/**
 * @hono/node-server hands over Node's own response (`c.env.outgoing`), which writes the headers
 * set on it together with whatever the handler answers. Setting the RateLimit headers there
 * spares the WHATWG Headers object that `c.header()` makes Hono build, and that the server then
 * copies back into Node's, on every guarded call (docs/hosts.md#hono-4).
 */
function nodeResponseOf(env: unknown): NodeResponse | undefined {
  const outgoing = typeof env === 'object' && env !== null ? (env as { outgoing?: Partial<NodeResponse> }).outgoing : undefined;
  return typeof outgoing?.setHeader === 'function' ? (outgoing as NodeResponse) : undefined;
}

function follow(verdict: GuardVerdict, c: Context, next: Next): Promise<Response | void> {
  if (!verdict.pass) return Promise.resolve(toFetchResponse(verdict.response, c.req.method === 'HEAD'));
  c.set('platformAuth', verdict.identity);
  const outgoing = nodeResponseOf(c.env);
  for (const name in verdict.headers) {
    if (outgoing) outgoing.setHeader(name, verdict.headers[name]!);
    else c.header(name, verdict.headers[name]);
  }
  return next();
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
  const answer = async (c: Context, at: PlatformPath, next: Next): Promise<Response | void> => {
    const parsedBody = hostReadBody(c);
    const request = await fromFetchRequest(c.req.raw, at, { raw: c, info: c.env, prefix, ...(parsedBody ? { parsedBody } : {}) });
    const response = await platform.handle(request);
    if (!response) return next();
    return toFetchResponse(response, c.req.method === 'HEAD');
  };
  // Not async: the host's own requests go on to `next()` without a promise of their own in between.
  const middleware: MiddlewareHandler = (c, next) => {
    // Hono routes on the path as it came (dot segments and all, on Deno): so does the platform, or
    // a path the host's own middleware did not match (`/x/../admin/…`) would reach the platform.
    const at = platformPathOf(platform, c.req.url, prefix, 'as-sent');
    return at ? answer(c, at, next) : next();
  };
  const quota = (apiPath?: string, doc?: GuardedRouteDoc): MiddlewareHandler => {
    const guard = fetchRequestGuard(platform, apiPath, doc, 'as-sent');
    return (c, next) => {
      const verdict = guard(c.req.raw, c, c.env);
      // With memory stores the verdict is already here: the handler runs without waiting a tick.
      return isThenable(verdict) ? verdict.then((settled) => follow(settled, c, next)) : follow(verdict, c, next);
    };
  };
  return Object.assign(middleware, { platform, quota });
}

export type { CourierPlatformOptions };
