/**
 * One of the processes of a burst (burst.ts), started once per test file and given one burst
 * after another. For each burst it reads one JSON line on stdin (a `BurstJob`), connects to the
 * store it names, says "ready", waits for "go", fires `calls` consume calls per client at once
 * (Promise.all), prints one JSON line with the tally (`{ admitted, rejected, unavailable,
 * errors, admittedBy }`, `admittedBy` per client id) and closes its connection. It exits when
 * stdin ends.
 *
 * With `clients` > 1 the calls go to the clients `<client>_0` ... `<client>_<n-1>`, interleaved;
 * otherwise to `client` itself. A Redis job names a server (`redisUrl`) or the nodes of a Redis
 * Cluster (`clusterNodes`, `host:port,host:port,...`), reached through an ioredis Cluster.
 */
import { createInterface } from 'node:readline';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { silentLogger } from '../../src/core/logger.js';
import { createPostgresQuotaStore, createQuotaService, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import type { BurstJob } from './burst.js';

async function connect(job: BurstJob): Promise<{ store: QuotaStore; close: () => Promise<unknown> }> {
  const { target } = job;
  if (target.kind === 'redis') {
    const redis = target.clusterNodes
      ? new Cluster(target.clusterNodes.split(','), { redisOptions: { maxRetriesPerRequest: 1 } })
      : new Redis(target.redisUrl!, { maxRetriesPerRequest: 1 });
    await redis.ping();
    return { store: createRedisQuotaStore({ client: redis, prefix: target.prefix }), close: () => redis.quit() };
  }
  const pool = new pg.Pool({ connectionString: target.databaseUrl, max: 10 });
  pool.on('error', () => {});
  // open the pool's connections now, so the burst measures the quota and not connection set-up
  await Promise.all(Array.from({ length: 10 }, () => pool.query('SELECT 1')));
  return { store: createPostgresQuotaStore({ pool, schema: target.schema, cleanupIntervalMs: 0 }), close: () => pool.end() };
}

async function run(job: BurstJob, nextLine: () => Promise<string | undefined>): Promise<void> {
  const clientIds = job.clients > 1 ? Array.from({ length: job.clients }, (_, i) => `${job.client}_${i}`) : [job.client];
  const { store, close } = await connect(job);
  const quota = createQuotaService({
    store,
    now: () => job.now,
    logger: silentLogger,
    onStoreError: 'closed', // a failure must be visible, never turned into an admission
    storeTimeoutMs: 20_000,
    rules: [{ scope: 'global', apiPath: job.path, minute: 100, day: 1000 }],
  });

  process.stdout.write('ready\n');
  if ((await nextLine()) !== 'go') throw new Error('expected "go"');

  const tally = { admitted: 0, rejected: 0, unavailable: 0, errors: [] as string[], admittedBy: {} as Record<string, number> };
  for (const id of clientIds) tally.admittedBy[id] = 0;
  const fired = Array.from({ length: job.calls }, () => clientIds).flat();
  const decisions = await Promise.allSettled(fired.map((id) => quota.consume(id, job.path)));
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

async function main(): Promise<void> {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const nextLine = async () => {
    const line = await lines.next();
    return line.done ? undefined : line.value;
  };
  for (let line = await nextLine(); line !== undefined; line = await nextLine()) await run(JSON.parse(line) as BurstJob, nextLine);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
