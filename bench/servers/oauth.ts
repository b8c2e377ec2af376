/**
 * courier-platform's OAuth server on Express, its store chosen by BENCH_STORE (memory, redis,
 * postgres). Courier proxy and quota off: only the token endpoint and userinfo are measured.
 * GET /__bench/stats reports the PostgreSQL statements this process sent (bench only); Redis
 * commands are counted on the server, by this process's connection name.
 */
import { createServer } from 'node:http';
import express from 'express';
import { courierPlatform } from '../../adapters/express.js';
import { createMemoryOAuthStore, createPostgresOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { announceReady, listenLocal, quietLogger, requireEnv, stopServer } from '../lib/child.js';
import { childStore, STATS_PATH, statsHandler } from '../lib/counted.js';
import { benchOAuthOptions } from '../lib/oauth.js';

const kind = requireEnv('BENCH_STORE');
const { store, redis, pool } = await childStore<OAuthStore>(kind, {
  memory: () => createMemoryOAuthStore(),
  redis: (client) => createRedisOAuthStore({ client, prefix: requireEnv('BENCH_REDIS_PREFIX') }),
  postgres: (pg) => createPostgresOAuthStore({ pool: pg, schema: requireEnv('BENCH_PG_SCHEMA') }),
});

// The issuer is the listening origin, known once listening: the app is attached after listen().
const server = createServer();
const url = await listenLocal(server);
const platform = courierPlatform({
  courier: false,
  quota: false,
  oauth: { ...benchOAuthOptions<express.Request>(url, requireEnv('BENCH_SIGNING_KEY')), store },
  logger: quietLogger(`oauth-${kind}`),
});
await platform.platform.ready(); // client hashed and saved, key loaded (and the PostgreSQL schema migrated)

const app = express();
app.get(STATS_PATH, statsHandler);
app.use(platform);
server.on('request', app);

announceReady(url, async () => {
  stopServer(server);
  redis?.disconnect();
  await pool?.end();
});
