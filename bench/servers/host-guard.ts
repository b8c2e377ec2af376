/**
 * GET /openapi/v1/ping on Fastify or Hono (BENCH_HOST), bare or behind courier-platform's quota
 * guard (BENCH_GUARD=on): the host's own route hook or middleware, memory stores, the OAuth server
 * in the same process. Hono runs on @hono/node-server, as Node users serve it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { courierPlatform as fastifyPlatform } from '../../adapters/fastify.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import { announceReady, listenLocal, quietLogger, requireEnv, stopServer } from '../lib/child.js';
import { benchOAuthOptions } from '../lib/oauth.js';
import { PING_BODY, PING_PATH } from '../lib/ping.js';

const host = requireEnv('BENCH_HOST');
const guarded = requireEnv('BENCH_GUARD') === 'on';
const limit = Number(requireEnv('BENCH_QUOTA_LIMIT'));

const server = createServer();
const url = await listenLocal(server);
const { authenticate, ...oauth } = benchOAuthOptions<IncomingMessage>(url, requireEnv('BENCH_SIGNING_KEY'));
const common = {
  courier: false as const,
  // Finite limits no run comes near, so every call runs the whole check-and-charge path.
  quota: { defaults: { minute: limit, day: limit, month: limit } },
  logger: quietLogger(`${host}-guard`),
};

if (host === 'fastify') {
  const app = Fastify({ serverFactory: (handler) => server.on('request', handler) });
  if (guarded) {
    const platform = fastifyPlatform({ ...common, oauth: { ...oauth, authenticate: (request) => authenticate!(request.raw) } });
    app.register(platform);
    await platform.platform.ready();
    app.get(PING_PATH, { preHandler: platform.quota() }, async () => PING_BODY);
  } else {
    app.get(PING_PATH, async () => PING_BODY);
  }
  await app.ready();
} else if (host === 'hono') {
  const app = new Hono();
  if (guarded) {
    const platform = honoPlatform({ ...common, oauth: { ...oauth, authenticate: (c) => authenticate!((c.env as { incoming: IncomingMessage }).incoming) } });
    app.use(platform);
    await platform.platform.ready();
    app.get(PING_PATH, platform.quota(), (c) => c.json(PING_BODY));
  } else {
    app.get(PING_PATH, (c) => c.json(PING_BODY));
  }
  server.on('request', getRequestListener(app.fetch));
} else {
  throw new Error(`BENCH_HOST must be fastify or hono (got ${host})`);
}

announceReady(url, () => stopServer(server));
