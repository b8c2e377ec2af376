/**
 * Concurrent calls from many processes never admit more than the limit. Four processes fire
 * their calls at the same moment against one path with a minute limit of 100:
 *
 * - one client, 100 calls per process: exactly 100 are admitted in total, and the day counter
 *   reads exactly 100;
 * - 50 clients at once, 40 calls per client per process (160 per client): every client gets
 *   exactly 100, and each one's day counter reads exactly 100.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createPostgresQuotaStore, createQuotaService, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';

const WORKER = fileURLToPath(new URL('./concurrency-worker.ts', import.meta.url));
const PROCESSES = 4;
const LIMIT = 100;
const NOW = Date.UTC(2026, 10, 21, 10, 0, 5); // one fixed instant for every process: one minute bucket
const PATH = '/openapi/v1/orders';
const DEADLINE_MS = 60_000;

interface Tally {
  admitted: number;
  rejected: number;
  unavailable: number;
  errors: string[];
  admittedBy: Record<string, number>;
}

interface Burst {
  name: string;
  clients: number;
  /** Per client per process. */
  calls: number;
}

const BURSTS: Burst[] = [
  { name: `one client, ${PROCESSES} processes x 100 calls`, clients: 1, calls: 100 },
  { name: `50 clients at once, ${PROCESSES} processes x 50 clients x 40 calls`, clients: 50, calls: 40 },
];

const children = new Set<ChildProcessWithoutNullStreams>();
afterEach(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.clear();
});

/** Reads the child's stdout line by line. */
function lineReader(child: ChildProcessWithoutNullStreams): () => Promise<string> {
  let buffer = '';
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let i = buffer.indexOf('\n'); i !== -1; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) => setTimeout(() => reject(new Error(`worker exited with ${code} before answering: ${stderr.slice(-2000)}`)), 50));
  });
  exited.catch(() => {});
  return () => {
    const ready = lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), exited]);
  };
}

async function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${DEADLINE_MS} ms`)), DEADLINE_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function burst(env: Record<string, string>, { clients, calls }: Burst): Promise<{ clientIds: string[]; tallies: Tally[] }> {
  const clientId = uniqueName('burst_client');
  const workers = Array.from({ length: PROCESSES }, () => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      env: {
        ...process.env,
        ...env,
        QUOTA_NOW: String(NOW),
        QUOTA_CLIENT: clientId,
        QUOTA_CLIENTS: String(clients),
        QUOTA_PATH: PATH,
        QUOTA_CALLS: String(calls),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    return { child, next: lineReader(child) };
  });
  // every process connected before any fires
  const ready = await withDeadline(Promise.all(workers.map((w) => w.next())), 'starting the workers');
  expect(ready).toEqual(Array(PROCESSES).fill('ready'));
  for (const { child } of workers) child.stdin.write('go\n');
  const results = await withDeadline(Promise.all(workers.map((w) => w.next())), 'the burst');
  const clientIds = clients > 1 ? Array.from({ length: clients }, (_, i) => `${clientId}_${i}`) : [clientId];
  return { clientIds, tallies: results.map((line) => JSON.parse(line) as Tally) };
}

/** What get_quota reports afterwards, read through a fresh service on the same store. */
async function counts(store: QuotaStore, clientId: string): Promise<Record<string, number>> {
  const quota = createQuotaService({ store, now: () => NOW, logger: silentLogger, onStoreError: 'closed' });
  const inspection = await quota.inspect(clientId, PATH);
  if (inspection.outcome !== 'ok') throw inspection.error;
  return Object.fromEntries(inspection.report.periods.map((p) => [p.period, p.used]));
}

/** Every client got exactly its limit, no call failed, and every counter reads exactly the limit. */
async function expectExactlyTheLimit(store: QuotaStore, { clients, calls }: Burst, clientIds: string[], tallies: Tally[]): Promise<void> {
  expect(tallies.flatMap((t) => t.errors)).toEqual([]); // a deadlock would surface here
  expect(tallies.reduce((sum, t) => sum + t.unavailable, 0)).toBe(0);
  const admittedBy = Object.fromEntries(clientIds.map((id) => [id, tallies.reduce((sum, t) => sum + (t.admittedBy[id] ?? 0), 0)]));
  expect(admittedBy).toEqual(Object.fromEntries(clientIds.map((id) => [id, LIMIT])));
  expect(tallies.reduce((sum, t) => sum + t.rejected, 0)).toBe(clients * (PROCESSES * calls - LIMIT));
  for (const id of clientIds) expect(await counts(store, id), id).toEqual({ minute: LIMIT, day: LIMIT, month: LIMIT });
}

describeRedis('quota under concurrency: Redis', () => {
  const prefix = uniqueName('quota_burst');
  const redis = redisUrl ? new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true }) : undefined;
  afterAll(async () => {
    if (!redis) return;
    let cursor = '0';
    for (let i = 0; i < 1000; i++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
    await redis.quit();
  });

  for (const shape of BURSTS) {
    it(`${shape.name}: each client admitted exactly ${LIMIT}, its day counter reads ${LIMIT}`, async () => {
      const { clientIds, tallies } = await burst({ QUOTA_STORE: 'redis', REDIS_URL: redisUrl as string, QUOTA_PREFIX: prefix }, shape);
      await expectExactlyTheLimit(createRedisQuotaStore({ client: redis as Redis, prefix }), shape, clientIds, tallies);
    }, 150_000);
  }
});

describePostgres('quota under concurrency: PostgreSQL', () => {
  const schema = uniqueName('quota_burst');
  const pool = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: 2 }) : undefined;
  pool?.on('error', () => {});
  afterAll(async () => {
    if (!pool) return;
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  for (const shape of BURSTS) {
    it(`${shape.name}: each client admitted exactly ${LIMIT}, its day counter reads ${LIMIT}, without deadlocks`, async () => {
      const store = createPostgresQuotaStore({ pool: pool as pg.Pool, schema });
      await store.migrate();
      const { clientIds, tallies } = await burst({ QUOTA_STORE: 'postgres', DATABASE_URL: databaseUrl as string, QUOTA_SCHEMA: schema }, shape);
      await expectExactlyTheLimit(store, shape, clientIds, tallies);
    }, 150_000);
  }
});
