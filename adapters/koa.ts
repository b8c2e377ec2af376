import type { Context, Middleware, Next } from 'koa';
import { isThenable } from '../src/core/maybe-promise.js';
import type { PlatformResponse } from '../src/core/http.js';
import { createPlatform, type Platform } from '../src/platform.js';
import type { CourierPlatformOptions } from '../src/options.js';
import type { GuardVerdict } from '../src/guard/guard.js';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import { requireGuard } from './guard.js';
import { fromNodeRequest, guardRequestOf } from './node.js';

export interface KoaPlatform extends Middleware {
  readonly platform: Platform;
  /**
   * Guards one of the host's OpenAPI routes with the quota; `ctx.state.platformAuth` holds the
   * calling application, its user and scopes.
   */
  quota(apiPath?: string, doc?: GuardedRouteDoc): Middleware;
}

function respond(ctx: Context, response: PlatformResponse): void {
  ctx.status = response.status;
  ctx.set(response.headers);
  ctx.body = response.body;
  if (response.onSent) ctx.res.once('finish', response.onSent);
}

function follow(ctx: Context, verdict: GuardVerdict, next: Next): Promise<void> | void {
  if (!verdict.pass) return respond(ctx, verdict.response);
  ctx.set(verdict.headers);
  ctx.state.platformAuth = verdict.identity;
  return next();
}

/**
 * Mounts the platform on a Koa 2 or 3 app.
 *
 * @example
 * import Koa from 'koa';
 * import { courierPlatform } from 'courier-platform/koa';
 * const app = new Koa();
 * app.use(courierPlatform());
 */
export function courierPlatform(options?: CourierPlatformOptions<Context>): KoaPlatform {
  const platform = createPlatform(options);
  const middleware: Middleware = async (ctx, next) => {
    if (!platform.owns(ctx.path)) return next();
    const parsed = (ctx.request as { body?: unknown }).body;
    // ctx.ip reads X-Forwarded-For only when app.proxy is set.
    const address = { ip: ctx.ip || undefined, proxyTrusted: ctx.app.proxy };
    const response = await platform.handle(fromNodeRequest(ctx.req, ctx.url, ctx.originalUrl, parsed, ctx, address));
    if (!response) return next();
    respond(ctx, response);
  };
  const quota = (apiPath?: string, doc?: GuardedRouteDoc): Middleware => {
    const guard = requireGuard(platform, apiPath, doc);
    // Not an async function: with memory stores the verdict is already here, and the host's
    // handler runs without a promise or a microtask of the guard's own. koa-compose turns a
    // throw into a rejection either way.
    return (ctx, next) => {
      const verdict = guard(guardRequestOf(ctx.req, ctx.originalUrl, ctx), apiPath);
      return isThenable(verdict) ? verdict.then((settled) => follow(ctx, settled, next)) : follow(ctx, verdict, next);
    };
  };
  return Object.assign(middleware, { platform, quota });
}

export type { CourierPlatformOptions };
