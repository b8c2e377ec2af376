/**
 * One cold platform process of load-burst.test.ts (the test next to it): Express with `courierPlatform()` on the store
 * BURST_STORE names (postgres | redis | cluster), through the address the test gives (a delaying
 * proxy). It builds its clients the way docs/stores.md recommends, waits for `platform.ready()`
 * (which warms the store's connections), listens on a free port of 127.0.0.1 and prints one JSON
 * line: `{ "port": ..., "readyMs": ... }`. Stopped with SIGTERM.
 *
 * Environment: BURST_STORE; DATABASE_URL (postgres) or REDIS_URL (redis) or BURST_CLUSTER
 * (`{ nodes: [host:port], natMap }` as JSON); BURST_NAME (key prefix and schema), BURST_CLIENT_ID,
 * BURST_CLIENT_HASH (the client's secret hash), BURST_SIGNING_KEY (a JWK, shared by the workers),
 * BURST_PATH and BURST_LIMIT (the path's daily limit).
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import express from 'express';
import { Cluster, Redis, type NatMap } from 'ioredis';
import pg from 'pg';
import { courierPlatform } from '../../adapters/express.js';
import { silentLogger } from '../../src/core/logger.js';
import { createPostgresOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

interface Stores {
  oauth: OAuthStore;
  quota: QuotaStore;
}

function stores(kind: string, name: string): Stores {
  if (kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10, min: 10, connectionTimeoutMillis: 2_000 });
    pool.on('error', () => {});
    return { oauth: createPostgresOAuthStore({ pool, schema: name }), quota: createPostgresQuotaStore({ pool, schema: name }) };
  }
  const options = { maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false };
  let client: Redis | Cluster;
  if (kind === 'cluster') {
    const { nodes, natMap } = JSON.parse(env('BURST_CLUSTER')) as { nodes: string[]; natMap: NatMap };
    client = new Cluster(nodes, { enableOfflineQueue: false, natMap, redisOptions: options });
  } else {
    client = new Redis(env('REDIS_URL'), options);
  }
  client.on('error', () => {});
  return { oauth: createRedisOAuthStore({ client, prefix: `${name}:oauth:` }), quota: createRedisQuotaStore({ client, prefix: `${name}:q` }) };
}

async function main(): Promise<void> {
  const started = performance.now();
  const name = env('BURST_NAME');
  const path = env('BURST_PATH');
  const { oauth, quota } = stores(env('BURST_STORE'), name);
  const platform = courierPlatform({
    logger: process.env.BURST_LOG ? console : silentLogger,
    courier: false,
    oauth: {
      store: oauth,
      publicUrl: 'http://127.0.0.1:9',
      signingKeys: [JSON.parse(env('BURST_SIGNING_KEY'))],
      clients: [{ id: env('BURST_CLIENT_ID'), name: 'Burst', secretHash: env('BURST_CLIENT_HASH'), redirectUris: ['http://127.0.0.1:9/cb'], grants: ['client_credentials'] }],
    },
    quota: { store: quota, rules: [{ scope: 'global', apiPath: path, minute: 0, day: Number(env('BURST_LIMIT')) }] },
    admin: false,
  });
  const app = express();
  app.use(platform);
  app.get(path, platform.quota(path), (_req, res) => {
    res.json({ code: 0 });
  });
  await platform.platform.ready();
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, readyMs: Math.round(performance.now() - started) })}\n`);
  process.once('SIGTERM', () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
