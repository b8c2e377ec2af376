/** The example on Hono, on Node, Bun or Deno: app.use() for the platform, app.get() for the guarded route, app.on() for the site's pages. */
import { Hono, type Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { courierPlatform } from 'courier-platform/hono';
import type { SiteAnswer, SiteRequest } from '../http.js';
import { PING_DOC, PING_PATH, type Site } from '../site.js';
import type { ExampleHost } from './host.js';
import { connInfoOfRuntime, serveFetch } from './runtime.js';

function send(c: Context, answer: SiteAnswer): Response {
  for (const cookie of answer.cookies) c.header('set-cookie', cookie, { append: true });
  return c.body(answer.body as string, answer.status as ContentfulStatusCode, answer.headers);
}

export async function createHonoHost(site: Site): Promise<ExampleHost> {
  const getConnInfo = await connInfoOfRuntime();
  const siteRequest = (c: Context): SiteRequest => {
    const url = new URL(c.req.url);
    return {
      method: c.req.method,
      url: `${url.pathname}${url.search}`,
      header: (name) => c.req.header(name),
      // The runtime's peer address; behind a proxy, read the proxy's header instead (docs/deployment.md#clientip).
      ip: getConnInfo(c).remote.address ?? 'unknown',
      body: c.req.raw.body as AsyncIterable<Uint8Array> | null,
    };
  };

  const platform = courierPlatform(site.platformOptions<Context>((c) => c.req.header('cookie')));
  const app = new Hono();
  app.use(platform);
  app.get(PING_PATH, platform.quota(PING_PATH, PING_DOC), (c) => send(c, site.ping(c.get('platformAuth'))));
  for (const route of site.routes) app.on(route.method, route.path, async (c) => send(c, await route.handle(siteRequest(c))));
  app.notFound((c) => send(c, site.notFound()));
  app.onError((error, c) => send(c, site.errorPage(c.req.method, c.req.path, error)));
  return {
    ready: () => platform.platform.ready(),
    close: () => platform.platform.close(),
    listen: (port, hostname) => serveFetch(app.fetch, port, hostname),
  };
}
