/**
 * Express + courier-platform's quota guard (`platform.quota()`) on GET /openapi/v1/ping, the
 * counters in the store chosen by BENCH_QUOTA_STORE (memory, redis, postgres); BENCH_QUOTA_HISTORY=off
 * switches the usage history off (it is on by default, as in an application). The OAuth server
 * runs in the same process with its memory store, so validating the Bearer token costs the same
 * for every quota store and sends nothing to Redis or PostgreSQL. GET /__bench/stats reports the
 * PostgreSQL statements this process sent (bench only); the guarded route is exactly what a host runs.
 */
import { createServer } from 'node:http';
import express from 'express';
import { courierPlatform } from '../../adapters/express.js';
import { createMemoryQuotaStore, createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { announceReady, listenLocal, quietLogger, requireEnv, stopServer } from '../lib/child.js';
import { childStore, STATS_PATH, statsHandler } from '../lib/counted.js';
import { benchOAuthOptions } from '../lib/oauth.js';
import { PING_BODY, PING_PATH } from '../lib/ping.js';

const kind = requireEnv('BENCH_QUOTA_STORE');
const limit = Number(requireEnv('BENCH_QUOTA_LIMIT'));
const { store, redis, pool } = await childStore<QuotaStore>(kind, {
  memory: () => createMemoryQuotaStore(),
  redis: (client) => createRedisQuotaStore({ client, prefix: requireEnv('BENCH_PREFIX') }),
  postgres: (pg) => createPostgresQuotaStore({ pool: pg, schema: requireEnv('BENCH_PG_SCHEMA') }),
});

const server = createServer();
const url = await listenLocal(server);
const platform = courierPlatform({
  courier: false,
  oauth: benchOAuthOptions<express.Request>(url, requireEnv('BENCH_SIGNING_KEY')),
  // Finite limits no run comes near, so every call runs the whole check-and-charge path.
  quota: { store, defaults: { minute: limit, day: limit, month: limit }, ...(process.env.BENCH_QUOTA_HISTORY === 'off' ? { history: false as const } : {}) },
  logger: quietLogger(`guard-${kind}`),
});
await platform.platform.ready();

const app = express();
app.use(platform);
app.get(PING_PATH, platform.quota(), (_req, res) => {
  res.json(PING_BODY);
});
// Bench plumbing goes after the measured route, so it adds no layer in front of it.
app.get(STATS_PATH, statsHandler);
server.on('request', app);

announceReady(url, async () => {
  stopServer(server);
  redis?.disconnect();
  await pool?.end();
});
