/**
 * GET /openapi/v1/ping on Fastify, Hono, Express, Connect or Koa (BENCH_HOST), bare or behind
 * courier-platform's quota guard (BENCH_GUARD=on): the host's own route hook or middleware, memory
 * stores, the OAuth server in the same process. Hono runs on @hono/node-server, as Node users
 * serve it. On Express, Connect and Koa the guarded route comes first and the platform is mounted
 * after it (it serves the OAuth flow that makes the token), so the guard is the only layer the
 * guarded app has in front of the route and the bare one lacks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import connect from 'connect';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as fastifyPlatform } from '../../adapters/fastify.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
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
} else if (host === 'express') {
  const app = express();
  if (guarded) {
    const platform = expressPlatform({ ...common, oauth: { ...oauth, authenticate: (req) => authenticate!(req) } });
    await platform.platform.ready();
    app.get(PING_PATH, platform.quota(), (_req, res) => void res.json(PING_BODY));
    app.use(platform);
  } else {
    app.get(PING_PATH, (_req, res) => void res.json(PING_BODY));
  }
  server.on('request', app);
} else if (host === 'connect') {
  const app = connect();
  const send = (_req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(PING_BODY));
  };
  if (guarded) {
    const platform = connectPlatform({ ...common, oauth: { ...oauth, authenticate: (req) => authenticate!(req) } });
    await platform.platform.ready();
    app.use(PING_PATH, platform.quota());
    app.use(PING_PATH, send);
    app.use(platform);
  } else {
    app.use(PING_PATH, send);
  }
  server.on('request', app);
} else if (host === 'koa') {
  const app = new Koa();
  const send = (ctx: Koa.Context) => {
    ctx.body = PING_BODY;
  };
  if (guarded) {
    const platform = koaPlatform({ ...common, oauth: { ...oauth, authenticate: (ctx) => authenticate!(ctx.req) } });
    await platform.platform.ready();
    const quota = platform.quota();
    // Koa has no router of its own: one path check, as on the bare app.
    app.use((ctx, next) => (ctx.path === PING_PATH ? quota(ctx, async () => send(ctx)) : next()));
    app.use(platform);
  } else {
    app.use((ctx, next) => (ctx.path === PING_PATH ? send(ctx) : next()));
  }
  server.on('request', app.callback());
} else {
  throw new Error(`BENCH_HOST must be fastify, hono, express, connect or koa (got ${host})`);
}

announceReady(url, () => stopServer(server));
