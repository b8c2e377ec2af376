/**
 * The multi-process burst: PROCESSES copies of concurrency-worker.ts connect to one store, say
 * "ready", and on "go" each fires its calls at once against one client and path (minute limit
 * 100, day limit 1000, one fixed instant). Each answers a tally; together they must have
 * admitted exactly 100, and the counters must read exactly 100.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createQuotaService, type QuotaStore } from '../../src/quota/index.js';
import { uniqueName } from '../support/services.js';

const WORKER = fileURLToPath(new URL('./concurrency-worker.ts', import.meta.url));
export const BURST_PROCESSES = 4;
export const BURST_LIMIT = 100;
const NOW = Date.UTC(2026, 10, 21, 10, 0, 5); // one fixed instant for every process: one minute bucket
export const BURST_PATH = '/openapi/v1/orders';
const DEADLINE_MS = 40_000;

export interface Tally {
  admitted: number;
  rejected: number;
  unavailable: number;
  errors: string[];
}

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

/** Runs the burst with the store named in `env` (see concurrency-worker.ts); every worker is gone when it returns. */
export async function burst(env: Record<string, string>, callsPerProcess: number): Promise<{ clientId: string; tallies: Tally[] }> {
  const clientId = uniqueName('burst_client');
  const children: ChildProcessWithoutNullStreams[] = [];
  try {
    const workers = Array.from({ length: BURST_PROCESSES }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
        env: { ...process.env, ...env, QUOTA_NOW: String(NOW), QUOTA_CLIENT: clientId, QUOTA_PATH: BURST_PATH, QUOTA_CALLS: String(callsPerProcess) },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      children.push(child);
      return { child, next: lineReader(child) };
    });
    // every process connected before any fires
    const ready = await withDeadline(Promise.all(workers.map((w) => w.next())), 'starting the workers');
    expect(ready).toEqual(Array(BURST_PROCESSES).fill('ready'));
    for (const { child } of workers) child.stdin.write('go\n');
    const results = await withDeadline(Promise.all(workers.map((w) => w.next())), 'the burst');
    return { clientId, tallies: results.map((line) => JSON.parse(line) as Tally) };
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Exactly the limit admitted over all processes, every other call rejected, no error anywhere. */
export function expectExactlyTheLimit(tallies: Tally[], callsPerProcess: number): void {
  expect(tallies.flatMap((t) => t.errors)).toEqual([]);
  expect(tallies.reduce((sum, t) => sum + t.unavailable, 0)).toBe(0);
  expect(tallies.reduce((sum, t) => sum + t.admitted, 0)).toBe(BURST_LIMIT);
  expect(tallies.reduce((sum, t) => sum + t.rejected, 0)).toBe(BURST_PROCESSES * callsPerProcess - BURST_LIMIT);
}

/** What get_quota reports afterwards, read through a fresh service on the same store. */
export async function usedAfterBurst(store: QuotaStore, clientId: string): Promise<Record<string, number>> {
  const quota = createQuotaService({ store, now: () => NOW, logger: silentLogger, onStoreError: 'closed' });
  const inspection = await quota.inspect(clientId, BURST_PATH);
  if (inspection.outcome !== 'ok') throw inspection.error;
  return Object.fromEntries(inspection.report.periods.map((p) => [p.period, p.used]));
}
