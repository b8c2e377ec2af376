/**
 * One of the processes of concurrency.test.ts. Connects, says "ready", waits for "go" on stdin,
 * fires QUOTA_CALLS consume calls per client at once (Promise.all) and prints one JSON line with
 * the tally: `{ admitted, rejected, unavailable, errors, admittedBy }`, `admittedBy` per client id.
 *
 * Environment: QUOTA_STORE (redis | postgres), REDIS_URL or DATABASE_URL, QUOTA_PREFIX (Redis)
 * or QUOTA_SCHEMA (PostgreSQL), QUOTA_NOW (fixed clock, ms), QUOTA_CLIENT, QUOTA_PATH, QUOTA_CALLS,
 * and optionally QUOTA_CLIENTS: with n > 1, the calls go to the n clients `<QUOTA_CLIENT>_0` ...
 * `<QUOTA_CLIENT>_<n-1>`, interleaved (QUOTA_CALLS each); default 1, QUOTA_CLIENT itself.
 * With REDIS_CLUSTER_NODES (`host:port,host:port,...`) the Redis store talks to that Redis
 * Cluster through an ioredis Cluster instead of REDIS_URL.
 */
import { createInterface } from 'node:readline';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { silentLogger } from '../../src/core/logger.js';
import { createPostgresQuotaStore, createQuotaService, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const kind = env('QUOTA_STORE');
  const now = Number(env('QUOTA_NOW'));
  const clientId = env('QUOTA_CLIENT');
  const apiPath = env('QUOTA_PATH');
  const calls = Number(env('QUOTA_CALLS'));
  const clients = Number(process.env.QUOTA_CLIENTS ?? '1');
  const clientIds = clients > 1 ? Array.from({ length: clients }, (_, i) => `${clientId}_${i}`) : [clientId];
  let store: QuotaStore;
  let close: () => Promise<unknown>;
  if (kind === 'redis') {
    const clusterNodes = process.env.REDIS_CLUSTER_NODES;
    const redis = clusterNodes
      ? new Cluster(clusterNodes.split(','), { redisOptions: { maxRetriesPerRequest: 1 } })
      : new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1 });
    store = createRedisQuotaStore({ client: redis, prefix: env('QUOTA_PREFIX') });
    await redis.ping();
    close = () => redis.quit();
  } else {
    const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10 });
    pool.on('error', () => {});
    store = createPostgresQuotaStore({ pool, schema: env('QUOTA_SCHEMA'), cleanupIntervalMs: 0 });
    // open the pool's connections now, so the burst measures the quota and not connection set-up
    await Promise.all(Array.from({ length: 10 }, () => pool.query('SELECT 1')));
    close = () => pool.end();
  }
  const quota = createQuotaService({
    store,
    now: () => now,
    logger: silentLogger,
    onStoreError: 'closed', // a failure must be visible, never turned into an admission
    storeTimeoutMs: 20_000,
    rules: [{ scope: 'global', apiPath, minute: 100, day: 1000 }],
  });

  process.stdout.write('ready\n');
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  lines.close();

  const tally = { admitted: 0, rejected: 0, unavailable: 0, errors: [] as string[], admittedBy: {} as Record<string, number> };
  for (const id of clientIds) tally.admittedBy[id] = 0;
  const fired = Array.from({ length: calls }, () => clientIds).flat();
  const decisions = await Promise.allSettled(fired.map((id) => quota.consume(id, apiPath)));
  for (const [i, result] of decisions.entries()) {
    if (result.status === 'rejected') tally.errors.push(String(result.reason));
    else if (result.value.outcome === 'admitted') {
      tally.admitted++;
      tally.admittedBy[fired[i]!]!++;
    } else if (result.value.outcome === 'rejected') tally.rejected++;
    else {
      tally.unavailable++;
      tally.errors.push(result.value.error.message);
    }
  }
  await close();
  process.stdout.write(`${JSON.stringify(tally)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
