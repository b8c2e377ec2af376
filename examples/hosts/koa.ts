/** The example on Koa: a chain of middleware, error pages outermost, then the platform, the guarded route and the site's pages. */
import { createServer } from 'node:http';
import { Buffer } from 'node:buffer';
import Koa, { type Context, type Middleware } from 'koa';
import { courierPlatform } from 'courier-platform/koa';
import type { SiteAnswer, SiteRequest } from '../http.js';
import { PING_DOC, PING_PATH, type Site } from '../site.js';
import { listenNode, type ExampleHost } from './host.js';

function respond(ctx: Context, answer: SiteAnswer): void {
  ctx.status = answer.status;
  ctx.set(answer.headers);
  if (answer.cookies.length > 0) ctx.append('set-cookie', answer.cookies);
  ctx.body = typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body);
}

const siteRequest = (ctx: Context): SiteRequest => ({
  method: ctx.method,
  url: ctx.originalUrl,
  header: (name) => ctx.get(name) || undefined,
  // Koa's client address: behind a proxy, set app.proxy (docs/deployment.md#clientip).
  ip: ctx.ip || 'unknown',
  body: ctx.req,
});

export function createKoaHost(site: Site): ExampleHost {
  const platform = courierPlatform(site.platformOptions<Context>((ctx) => ctx.get('cookie') || undefined));
  const guard = platform.quota(PING_PATH, PING_DOC);
  const pages = new Map(site.routes.map((route) => [`${route.method} ${route.path}`, route]));

  const errorPages: Middleware = async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      respond(ctx, site.errorPage(ctx.method, ctx.path, error));
    }
  };
  const ping: Middleware = (ctx, next) =>
    ctx.method === 'GET' && ctx.path === PING_PATH ? guard(ctx, async () => respond(ctx, site.ping(ctx.state.platformAuth))) : next();
  const sitePages: Middleware = async (ctx, next) => {
    // Koa answers HEAD with the GET route's headers and no body, as Express does.
    const route = pages.get(`${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${ctx.path}`);
    if (!route) return next();
    respond(ctx, await route.handle(siteRequest(ctx)));
  };
  const notFound: Middleware = (ctx) => respond(ctx, site.notFound());

  const app = new Koa();
  app.use(errorPages);
  app.use(platform);
  app.use(ping);
  app.use(sitePages);
  app.use(notFound);
  return {
    ready: () => platform.platform.ready(),
    close: () => platform.platform.close(),
    listen: (port, hostname) => listenNode(createServer(app.callback()), port, hostname),
  };
}
