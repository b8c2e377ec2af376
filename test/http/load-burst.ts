/**
 * The load burst (docs/stores.md#deadlines-and-outages): two cold platform processes on
 * one shared store, the store behind a TCP proxy that delays every chunk and each new connection
 * by 20 ms (a store in another zone), the machine loaded by CPU hogs. A burst of 400 guarded
 * calls, 200 at each process at once, against a daily limit of 100, must admit exactly 100 and
 * answer every other call 429: a slow store is waited for, never read as an outage, and nothing
 * is admitted past the limit. The figures are printed per store.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cheapClients, SERVICE, sharedSigningKey } from '../support/oauth.js';
import { uniqueName } from '../support/services.js';
import type { TcpProxy } from '../support/tcp-proxy.js';

const WORKER = fileURLToPath(new URL('./burst-worker.ts', import.meta.url));
const PATH = '/openapi/v1/ping';
const LIMIT = 100;
const CALLS_PER_PROCESS = 200;
export const DELAY = { chunkMs: 20, connectMs: 20 };
/** Processes spinning on the CPU while the workers start and the burst runs; each ends by itself. */
const HOGS = 2;
const HOG_MS = 90_000;
const TEST_MS = 180_000;

interface Tally {
  admitted: number;
  rejected: number;
  shed: number;
  otherErrors: number;
  statuses: Record<number, number>;
}

export interface Setup {
  env: Record<string, string>;
  proxies: TcpProxy[];
  teardown(): Promise<void>;
}

function hogs(): ChildProcess[] {
  return Array.from({ length: HOGS }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${HOG_MS}; while (Date.now() < end) {}`], { stdio: 'ignore' }),
  );
}

interface Worker {
  child: ChildProcessWithoutNullStreams;
  port: number;
  readyMs: number;
  /** What it wrote to stderr: its log, with BURST_LOG set. */
  log(): string;
}

async function startWorker(env: Record<string, string>): Promise<Worker> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`the worker did not start within 60 s: ${output}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const end = buffer.indexOf('\n');
      if (end !== -1) {
        clearTimeout(timer);
        resolve(buffer.slice(0, end));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited with ${code}: ${output}`));
    });
  });
  return { child, ...(JSON.parse(line) as { port: number; readyMs: number }), log: () => output };
}

async function token(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${SERVICE.id}:${SERVICE.secret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  });
  const body = (await res.json()) as { access_token?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.access_token!;
}

async function fire(ports: number[], accessToken: string): Promise<Tally> {
  const tally: Tally = { admitted: 0, rejected: 0, shed: 0, otherErrors: 0, statuses: {} };
  const calls = ports.flatMap((port) =>
    Array.from({ length: CALLS_PER_PROCESS }, async () => {
      const res = await fetch(`http://127.0.0.1:${port}${PATH}`, { headers: { authorization: `Bearer ${accessToken}` }, signal: AbortSignal.timeout(60_000) });
      await res.arrayBuffer();
      tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
      if (res.status === 200) tally.admitted++;
      else if (res.status === 429) tally.rejected++;
      else if (res.status === 503 && res.headers.get('retry-after')) tally.shed++;
      else if (res.status >= 500) tally.otherErrors++;
    }),
  );
  await Promise.all(calls);
  return tally;
}

async function used(port: number, accessToken: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/openapi/v1/get_quota?api_path=${PATH}`, { headers: { authorization: `Bearer ${accessToken}` } });
  const body = (await res.json()) as { data: { periods: { period: string; used: number }[] } };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data.periods.find((p) => p.period === 'day')!.used;
}

export function describeBurst(name: string, suite: (name: string, body: () => void) => void, setup: (label: string) => Promise<Setup>): void {
  suite(`a burst of ${2 * CALLS_PER_PROCESS} guarded calls across two cold processes, limit ${LIMIT}, the store 20 ms away, the machine loaded: ${name}`, () => {
    let s: Setup | undefined;
    const workers: ChildProcessWithoutNullStreams[] = [];
    let spinning: ChildProcess[] = [];
    beforeAll(async () => {
      s = await setup(uniqueName('burst'));
    }, 60_000);
    afterAll(async () => {
      for (const child of [...workers, ...spinning]) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await s?.teardown();
    });

    it('admits exactly the limit, answers every other call 429, and no call 5xx', async () => {
      const [client] = (await cheapClients()).filter((c) => c.id === SERVICE.id);
      spinning = hogs();
      const env = {
        ...s!.env,
        BURST_CLIENT_ID: SERVICE.id,
        BURST_CLIENT_HASH: client!.secretHash!,
        BURST_SIGNING_KEY: JSON.stringify(await sharedSigningKey()),
        BURST_PATH: PATH,
        BURST_LIMIT: String(LIMIT),
      };
      const started = await Promise.all([startWorker(env), startWorker(env)]);
      workers.push(...started.map((w) => w.child));
      const accessToken = await token(started[0]!.port);
      const tally = await fire(
        started.map((w) => w.port),
        accessToken,
      );
      const counted = await used(started[1]!.port, accessToken);
      for (const hog of spinning) hog.kill('SIGKILL');
      console.log(
        `[burst ${name}] admitted ${tally.admitted}, 429 ${tally.rejected}, 503 ${tally.shed}, other 5xx ${tally.otherErrors}; get_quota used ${counted}; ready in ${started.map((w) => w.readyMs).join(' / ')} ms; statuses ${JSON.stringify(tally.statuses)}`,
      );
      if (tally.admitted !== LIMIT || tally.shed + tally.otherErrors > 0) console.log(started.map((w) => w.log().slice(-3000)).join('\n---\n'));
      expect(tally.otherErrors).toBe(0);
      expect(tally.shed).toBe(0);
      expect(tally.admitted).toBe(LIMIT);
      expect(tally.rejected).toBe(2 * CALLS_PER_PROCESS - LIMIT);
      expect(counted).toBe(LIMIT);
      expect(s!.proxies.every((proxy) => proxy.connections > 0)).toBe(true);
    }, TEST_MS);
  });
}

