/**
 * The multi-process burst: BURST_PROCESSES copies of concurrency-worker.ts connect to one store,
 * say "ready", and on "go" each fires its calls at once (minute limit 100, day limit 1000, one
 * fixed instant), at one client or at many. Each answers a tally; together they must have admitted
 * exactly the limit per client, and the counters must read exactly the limit. The workers start
 * once per test file (`useBurstWorkers`) and take its bursts one after another.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createQuotaService, type QuotaStore } from '../../src/quota/index.js';
import { uniqueName } from '../support/services.js';

const WORKER = fileURLToPath(new URL('./concurrency-worker.ts', import.meta.url));
export const BURST_PROCESSES = 4;
export const BURST_LIMIT = 100;
const NOW = Date.UTC(2026, 10, 21, 10, 0, 5); // one fixed instant for every process: one minute bucket
const PATH = '/openapi/v1/orders';
// Four tsx workers compile before they first connect: generous, for a loaded CI machine.
const DEADLINE_MS = 60_000;

export interface BurstShape {
  name: string;
  clients: number;
  /** Per client per process. */
  calls: number;
}

export const BURSTS: readonly BurstShape[] = [
  { name: `one client, ${BURST_PROCESSES} processes x 400 calls`, clients: 1, calls: 400 },
  { name: `50 clients at once, ${BURST_PROCESSES} processes x 50 clients x 40 calls`, clients: 50, calls: 40 },
];

/** The store the workers count in: a Redis server or Cluster under a key prefix, or a PostgreSQL schema. */
export type BurstTarget =
  | { kind: 'redis'; redisUrl?: string; clusterNodes?: string; prefix: string }
  | { kind: 'postgres'; databaseUrl: string; schema: string };

/** One burst, as a worker reads it (one JSON line). */
export interface BurstJob {
  target: BurstTarget;
  now: number;
  client: string;
  clients: number;
  path: string;
  calls: number;
}

interface Tally {
  admitted: number;
  rejected: number;
  unavailable: number;
  errors: string[];
  admittedBy: Record<string, number>;
}

export interface BurstResult {
  shape: BurstShape;
  clientIds: string[];
  tallies: Tally[];
}

/** Reads the child's stdout line by line; once it has exited, every read fails with its stderr. */
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

interface Worker {
  child: ChildProcessWithoutNullStreams;
  next: () => Promise<string>;
}

function startWorker(): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { stdio: ['pipe', 'pipe', 'pipe'] });
  return { child, next: lineReader(child) };
}

const running = (child: ChildProcessWithoutNullStreams) => child.exitCode === null && child.signalCode === null;

export type Burst = (target: BurstTarget, shape: BurstShape) => Promise<BurstResult>;

/**
 * The burst of this test file: its BURST_PROCESSES workers start with the first burst and end
 * after the file's last test (or at once when a burst fails, so the next one starts clean).
 */
export function useBurstWorkers(): Burst {
  let workers: Worker[] = [];
  const stop = () => {
    for (const { child } of workers) if (running(child)) child.kill('SIGKILL');
    workers = [];
  };
  afterAll(stop);

  return async (target, shape) => {
    if (workers.length === 0) workers = Array.from({ length: BURST_PROCESSES }, startWorker);
    const client = uniqueName('burst_client');
    const job: BurstJob = { target, now: NOW, client, clients: shape.clients, path: PATH, calls: shape.calls };
    try {
      for (const { child } of workers) child.stdin.write(`${JSON.stringify(job)}\n`);
      // every process connected before any fires
      const ready = await withDeadline(Promise.all(workers.map((w) => w.next())), 'connecting the workers');
      expect(ready).toEqual(Array(BURST_PROCESSES).fill('ready'));
      for (const { child } of workers) child.stdin.write('go\n');
      const results = await withDeadline(Promise.all(workers.map((w) => w.next())), 'the burst');
      const clientIds = shape.clients > 1 ? Array.from({ length: shape.clients }, (_, i) => `${client}_${i}`) : [client];
      return { shape, clientIds, tallies: results.map((line) => JSON.parse(line) as Tally) };
    } catch (error) {
      stop();
      throw error;
    }
  };
}

/** What get_quota reports afterwards, read through a fresh service on the same store. */
async function usedAfterBurst(store: QuotaStore, clientId: string): Promise<Record<string, number>> {
  const quota = createQuotaService({ store, now: () => NOW, logger: silentLogger, onStoreError: 'closed' });
  const inspection = await quota.inspect(clientId, PATH);
  if (inspection.outcome !== 'ok') throw inspection.error;
  return Object.fromEntries(inspection.report.periods.map((p) => [p.period, p.used]));
}

/** Every client got exactly the limit, no call failed (a deadlock would show here), and every counter reads exactly the limit. */
export async function expectExactlyTheLimit(store: QuotaStore, { shape, clientIds, tallies }: BurstResult): Promise<void> {
  expect(tallies.flatMap((t) => t.errors)).toEqual([]);
  expect(tallies.reduce((sum, t) => sum + t.unavailable, 0)).toBe(0);
  const admittedBy = Object.fromEntries(clientIds.map((id) => [id, tallies.reduce((sum, t) => sum + (t.admittedBy[id] ?? 0), 0)]));
  expect(admittedBy).toEqual(Object.fromEntries(clientIds.map((id) => [id, BURST_LIMIT])));
  expect(tallies.reduce((sum, t) => sum + t.rejected, 0)).toBe(shape.clients * (BURST_PROCESSES * shape.calls - BURST_LIMIT));
  for (const id of clientIds) expect(await usedAfterBurst(store, id), id).toEqual({ minute: BURST_LIMIT, day: BURST_LIMIT, month: BURST_LIMIT });
}
