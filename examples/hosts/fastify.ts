/**
 * The example on Fastify: the platform registered as a plugin, the guarded route with the quota
 * as its preHandler hook, then the site's pages as routes. The app's one content-type parser
 * hands the form handlers the unread body (the platform's routes keep parsers of their own).
 */
import { Buffer } from 'node:buffer';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { courierPlatform } from 'courier-platform/fastify';
import type { SiteAnswer, SiteRequest } from '../http.js';
import { PING_DOC, PING_PATH, type Site } from '../site.js';
import { single, type ExampleHost } from './host.js';

function send(reply: FastifyReply, answer: SiteAnswer): FastifyReply {
  reply.code(answer.status).headers(answer.headers);
  if (answer.cookies.length > 0) reply.header('set-cookie', answer.cookies);
  return reply.send(typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body));
}

const siteRequest = (request: FastifyRequest): SiteRequest => ({
  method: request.method,
  url: request.url,
  header: (name) => single(request.headers[name]),
  // Fastify's client address: behind a proxy, set trustProxy (docs/deployment.md#clientip).
  ip: request.ip,
  body: (request.body as AsyncIterable<Uint8Array> | undefined) ?? null,
});

export async function createFastifyHost(site: Site): Promise<ExampleHost> {
  const platform = courierPlatform(site.platformOptions<FastifyRequest>((request) => single(request.headers.cookie)));
  const app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  await app.register(platform);
  app.get(PING_PATH, { preHandler: platform.quota(PING_PATH, PING_DOC) }, (request, reply) => send(reply, site.ping(request.platformAuth)));
  for (const route of site.routes) {
    app.route({ method: route.method, url: route.path, handler: async (request, reply) => send(reply, await route.handle(siteRequest(request))) });
  }
  app.setNotFoundHandler((_request, reply) => send(reply, site.notFound()));
  app.setErrorHandler((error, request, reply) => send(reply, site.errorPage(request.method, request.url.split('?')[0]!, error)));
  return {
    ready: async () => {
      await app.ready();
      await platform.platform.ready();
    },
    close: () => platform.platform.close(),
    listen: async (port, hostname) => {
      await app.listen({ port, host: hostname });
      return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
    },
  };
}
