/**
 * GET /openapi/v1/ping on Fastify, Hono, Express, Connect or Koa (BENCH_HOST), bare
 * (BENCH_GUARD=off) or behind courier-platform's quota guard (BENCH_GUARD=on): the host's own
 * route hook or middleware, memory stores, the OAuth server in the same process. Hono runs on
 * @hono/node-server, as Node users serve it.
 *
 * On Hono, Express, Connect and Koa the guarded route comes first and the platform is mounted after
 * it (it serves the OAuth flow that makes the token); the Fastify plugin only adds routes under its
 * prefix. So the guard is the only layer the guarded app has in front of the route and the bare
 * one lacks.
 *
 * BENCH_GUARD=headers puts a hook in the guard's place that only sets the two RateLimit headers
 * every guarded answer carries, the way the adapter sets them: what any guard that keeps that
 * promise costs before it checks a token or counts a call.
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
const mode = requireEnv('BENCH_GUARD');
if (mode !== 'on' && mode !== 'off' && mode !== 'headers') throw new Error(`BENCH_GUARD must be on, off or headers (got ${mode})`);
const guarded = mode === 'on';
/** The shape of a guarded answer's headers: three limited periods (docs/quota.md). */
const RATE_LIMIT_HEADERS: Record<string, string> = {
  'ratelimit-policy': `"minute";q=${requireEnv('BENCH_QUOTA_LIMIT')};w=60, "day";q=${requireEnv('BENCH_QUOTA_LIMIT')};w=86400, "month";q=${requireEnv('BENCH_QUOTA_LIMIT')}`,
  ratelimit: '"minute";r=999999999;t=37, "day";r=999999999;t=4237, "month";r=999999999;t=436237',
};
const setNodeHeaders = (_req: unknown, res: ServerResponse, next: () => void) => {
  for (const name in RATE_LIMIT_HEADERS) res.setHeader(name, RATE_LIMIT_HEADERS[name]!);
  next();
};
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
  } else if (mode === 'headers') {
    const preHandler = (_request: unknown, reply: { headers(values: Record<string, string>): unknown }, done: () => void) => {
      reply.headers(RATE_LIMIT_HEADERS);
      done();
    };
    app.get(PING_PATH, { preHandler }, async () => PING_BODY);
  } else {
    app.get(PING_PATH, async () => PING_BODY);
  }
  await app.ready();
} else if (host === 'hono') {
  const app = new Hono();
  if (guarded) {
    const platform = honoPlatform({ ...common, oauth: { ...oauth, authenticate: (c) => authenticate!((c.env as { incoming: IncomingMessage }).incoming) } });
    await platform.platform.ready();
    app.get(PING_PATH, platform.quota(), (c) => c.json(PING_BODY));
    app.use(platform);
  } else if (mode === 'headers') {
    app.get(
      PING_PATH,
      async (c, next) => {
        const { outgoing } = c.env as { outgoing: ServerResponse };
        for (const name in RATE_LIMIT_HEADERS) outgoing.setHeader(name, RATE_LIMIT_HEADERS[name]!);
        await next();
      },
      (c) => c.json(PING_BODY),
    );
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
  } else if (mode === 'headers') {
    app.get(PING_PATH, setNodeHeaders, (_req, res) => void res.json(PING_BODY));
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
  } else if (mode === 'headers') {
    app.use(PING_PATH, setNodeHeaders);
    app.use(PING_PATH, send);
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
  } else if (mode === 'headers') {
    const headers = async (ctx: Koa.Context, next: () => Promise<void>) => {
      ctx.set(RATE_LIMIT_HEADERS);
      await next();
    };
    app.use((ctx, next) => (ctx.path === PING_PATH ? headers(ctx, async () => send(ctx)) : next()));
  } else {
    app.use((ctx, next) => (ctx.path === PING_PATH ? send(ctx) : next()));
  }
  server.on('request', app.callback());
} else {
  throw new Error(`BENCH_HOST must be fastify, hono, express, connect or koa (got ${host})`);
}

announceReady(url, () => stopServer(server));
