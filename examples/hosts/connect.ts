/** The example on Connect: a stack of app.use() middleware, the platform first, then the guarded route and the site's pages. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import connect from 'connect';
import { courierPlatform } from 'courier-platform/connect';
import type { QuotaIdentity } from 'courier-platform';
import type { SiteAnswer, SiteRequest } from '../http.js';
import { PING_DOC, PING_PATH, type Site, type SiteRoute } from '../site.js';
import { listenNode, single, type ExampleHost } from './host.js';

type Request = IncomingMessage & { originalUrl?: string; platformAuth?: QuotaIdentity };

function send(res: ServerResponse, answer: SiteAnswer): void {
  res.writeHead(answer.status, { ...answer.headers, ...(answer.cookies.length > 0 ? { 'set-cookie': answer.cookies } : {}) });
  res.end(answer.body);
}

const siteRequest = (req: Request): SiteRequest => ({
  method: req.method ?? 'GET',
  url: req.originalUrl ?? req.url ?? '/',
  header: (name) => single(req.headers[name]),
  // Connect has no notion of a proxy: the socket's peer is the client.
  ip: req.socket.remoteAddress ?? 'unknown',
  body: req,
});

/** Connect's app.use(path) matches every path below it and every method: this route's alone (HEAD as GET, Node leaves out the body). */
const matches = (req: Request, route: { method: string }) =>
  (req.method === 'HEAD' ? 'GET' : req.method) === route.method && /^\/?(\?|$)/.test(req.url ?? '/');

/** A route's handler as Connect middleware: a thrown error goes to the error middleware through next(error). */
const page =
  (route: SiteRoute) =>
  (req: Request, res: ServerResponse, next: (error?: unknown) => void): void => {
    if (!matches(req, route)) return next();
    route.handle(siteRequest(req)).then((answer) => send(res, answer), next);
  };

export function createConnectHost(site: Site): ExampleHost {
  const platform = courierPlatform(site.platformOptions<IncomingMessage>((req) => single(req.headers.cookie)));
  const app = connect();
  app.use(platform);
  const guard = platform.quota(PING_PATH, PING_DOC);
  app.use(PING_PATH, (req: Request, res: ServerResponse, next: (error?: unknown) => void) => {
    if (!matches(req, { method: 'GET' })) return next();
    guard(req, res, (error?: unknown) => (error ? next(error) : send(res, site.ping(req.platformAuth))));
  });
  for (const route of site.routes) app.use(route.path, page(route));
  app.use((_req: Request, res: ServerResponse) => send(res, site.notFound()));
  app.use((error: unknown, req: Request, res: ServerResponse, next: (error?: unknown) => void) => {
    if (res.headersSent) return next(error);
    send(res, site.errorPage(req.method ?? 'GET', (req.originalUrl ?? '/').split('?')[0]!, error));
  });
  return {
    ready: () => platform.platform.ready(),
    close: () => platform.platform.close(),
    listen: (port, hostname) => listenNode(createServer(app), port, hostname),
  };
}
