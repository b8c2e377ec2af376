/**
 * courier-platform's OAuth server on Express 5 or, with BENCH_HOST=koa, on Koa 3 (the host
 * oidc-provider is built on), its store chosen by BENCH_STORE (memory, redis, postgres). Courier
 * proxy and quota off: only the token endpoint and userinfo are measured.
 * GET /__bench/stats reports the PostgreSQL statements this process sent (bench only); Redis
 * commands are counted on the server, by this process's connection name.
 */
import { createServer } from 'node:http';
import express from 'express';
import Koa from 'koa';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { createMemoryOAuthStore, createPostgresOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { announceReady, listenLocal, quietLogger, requireEnv, stopServer } from '../lib/child.js';
import { childStore, STATS_PATH, statsHandler } from '../lib/counted.js';
import { benchOAuthOptions } from '../lib/oauth.js';

const kind = requireEnv('BENCH_STORE');
const host = process.env.BENCH_HOST ?? 'express';
if (host !== 'express' && host !== 'koa') throw new Error(`BENCH_HOST must be express or koa (got ${host})`);
const { store, redis, pool } = await childStore<OAuthStore>(kind, {
  memory: () => createMemoryOAuthStore(),
  redis: (client) => createRedisOAuthStore({ client, prefix: requireEnv('BENCH_REDIS_PREFIX') }),
  postgres: (pg) => createPostgresOAuthStore({ pool: pg, schema: requireEnv('BENCH_PG_SCHEMA') }),
});

// The issuer is the listening origin, known once listening: the app is attached after listen().
const server = createServer();
const url = await listenLocal(server);
const { authenticate, ...oauth } = { ...benchOAuthOptions(url, requireEnv('BENCH_SIGNING_KEY')), store };
const common = { courier: false as const, quota: false as const, logger: quietLogger(`oauth-${kind}-${host}`) };

if (host === 'koa') {
  const platform = koaPlatform({ ...common, oauth: { ...oauth, authenticate: (ctx) => authenticate!(ctx.req) } });
  await platform.platform.ready(); // client hashed and saved, key loaded (and the PostgreSQL schema migrated)
  const app = new Koa();
  app.use(async (ctx, next) => {
    if (ctx.path !== STATS_PATH) return next();
    ctx.respond = false;
    statsHandler(ctx.req, ctx.res);
  });
  app.use(platform);
  server.on('request', app.callback());
} else {
  const platform = expressPlatform({ ...common, oauth: { ...oauth, authenticate: (req) => authenticate!(req) } });
  await platform.platform.ready();
  const app = express();
  app.get(STATS_PATH, statsHandler);
  app.use(platform);
  server.on('request', app);
}

announceReady(url, async () => {
  stopServer(server);
  redis?.disconnect();
  await pool?.end();
});
