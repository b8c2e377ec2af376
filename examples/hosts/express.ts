/** The example on Express: the platform with one app.use(), the guarded route, then the site's pages as Express routes. */
import { createServer } from 'node:http';
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import { courierPlatform } from 'courier-platform/express';
import type { SiteAnswer, SiteRequest } from '../http.js';
import { PING_DOC, PING_PATH, type Site } from '../site.js';
import { listenNode, type ExampleHost } from './host.js';

function send(res: Response, answer: SiteAnswer): void {
  res.status(answer.status).set(answer.headers);
  if (answer.cookies.length > 0) res.append('set-cookie', answer.cookies);
  res.end(answer.body);
}

const siteRequest = (req: Request): SiteRequest => ({
  method: req.method,
  url: req.originalUrl,
  header: (name) => req.get(name),
  // Express's client address: behind a proxy, set 'trust proxy' (docs/deployment.md#clientip).
  ip: req.ip ?? 'unknown',
  body: req,
});

export function createExpressHost(site: Site): ExampleHost {
  const platform = courierPlatform(site.platformOptions<Request>((req) => req.get('cookie')));
  const app = express();
  app.disable('x-powered-by');
  app.use(platform);
  app.get(PING_PATH, platform.quota(PING_PATH, PING_DOC), (req, res) => send(res, site.ping(req.platformAuth)));
  for (const route of site.routes) {
    // Express 5 passes a rejected promise on to the error handler below.
    app[route.method === 'GET' ? 'get' : 'post'](route.path, async (req, res) => send(res, await route.handle(siteRequest(req))));
  }
  app.use((_req, res) => send(res, site.notFound()));
  const errors: ErrorRequestHandler = (error, req, res, next) => {
    if (res.headersSent) return next(error); // Express ends the half-sent response
    send(res, site.errorPage(req.method, req.path, error));
  };
  app.use(errors);
  return {
    ready: () => platform.platform.ready(),
    close: () => platform.platform.close(),
    listen: (port, hostname) => listenNode(createServer(app), port, hostname),
  };
}
