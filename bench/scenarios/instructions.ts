/**
 * The hosts scenario's servers under valgrind's callgrind: user-space instructions per request of
 * each host bare, with the two RateLimit headers alone and with the guard. An instruction count
 * does not move with the machine's other load, where the hosts scenario's req/s ratios swing by
 * ±0.05 on a shared 2-CPU machine: it shows where the guard's own cost moves between changes.
 *
 * Opt-in (`--only instructions`): it needs valgrind, and a target takes about a minute and a half.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { registerCleanup } from '../lib/cleanup.js';
import { sequentialRequests } from '../lib/load.js';
import { sharedSigningKey } from '../lib/oauth.js';
import { isPingBody, PING_PATH } from '../lib/ping.js';
import { fixed, table } from '../lib/report.js';
import type { ProbeResult, Scenario } from '../lib/scenario.js';
import { startServer, type ServerProcess } from '../lib/servers.js';
import { hostToken, HOSTS, LIMIT } from './hosts.js';

/** Requests before the first count: enough for V8's optimizing compiler to finish with most hosts' request path. */
const WARMUP_REQUESTS = 8_000;
/**
 * A count during which TurboFan's background jobs still ran more than this per request is
 * discarded, and the next `--requests` are counted instead, at most `MAX_WINDOWS` times: the
 * code under test is not compiled yet. Under valgrind a program's threads take turns on one CPU,
 * so how far the compiler's background thread has got after a given number of requests depends
 * on timing: on Koa it can still run after 12,000.
 */
const SETTLED_COMPILER_PER_REQUEST = 100;
const MAX_WINDOWS = 6;
/** valgrind runs a program on one CPU at a time; two of them fill the machine's two CPUs. */
const PARALLEL = 2;
/** Under valgrind a start-up takes tens of seconds. */
const START_TIMEOUT_MS = 300_000;
const MODES = [
  { guard: 'off', label: (host: string) => `bare ${host}` },
  { guard: 'headers', label: (host: string) => `${host} + the two RateLimit headers alone` },
  { guard: 'on', label: (host: string) => `${host} + guard` },
] as const;
type Guard = (typeof MODES)[number]['guard'];
/** Functions whose inclusive count callgrind_annotate gives: the collector, and TurboFan's background jobs. */
const GC_FUNCTION = 'v8::internal::Heap::CollectGarbage(';
const COMPILER_FUNCTION = 'v8::internal::OptimizingCompileDispatcher::CompileTask::RunInternal(';

const exec = promisify(execFile);
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Count {
  host: string;
  guard: Guard;
  label: string;
  /** Instructions of every thread of the server per request, the collector's excluded. */
  perRequest: number;
  gcPerRequest: number;
  compilerPerRequest: number;
  /** Requests the server had answered before the counted ones. */
  warmup: number;
}

interface Window {
  total: number;
  gc: number;
  compiler: number;
}

/** Zeroes the counters, sends `requests`, dumps them as the run's dump number `index` and reads it. */
async function countWindow(pid: number, out: string, index: number, send: () => Promise<void>): Promise<Window> {
  await exec('callgrind_control', ['-z', String(pid)]);
  await send();
  await exec('callgrind_control', ['-d', `counted-${index}`, String(pid)]);
  // callgrind appends the dump's number to the file name.
  const dump = `${out}.${index}`;
  try {
    const total = Number(/^summary: (\d+)$/m.exec(await readFile(dump, 'utf8'))?.[1] ?? Number.NaN);
    const { stdout: annotated } = await exec('callgrind_annotate', ['--inclusive=yes', '--threshold=100', dump], { maxBuffer: 1 << 28 });
    return { total, gc: inclusiveOf(annotated, GC_FUNCTION), compiler: inclusiveOf(annotated, COMPILER_FUNCTION) };
  } finally {
    await rm(dump, { force: true });
  }
}

/** The first tool of valgrind's that is missing, or undefined when all are there. */
async function missingTool(): Promise<string | undefined> {
  for (const [tool, flag] of [['valgrind', '--version'], ['callgrind_control', '--version'], ['callgrind_annotate', '--version']] as const) {
    try {
      await exec(tool, [flag]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return tool;
    }
  }
  return undefined;
}

/** The inclusive count of the first (largest) line naming `fn` in callgrind_annotate's output; 0 when it never ran. */
function inclusiveOf(annotated: string, fn: string): number {
  for (const line of annotated.split('\n')) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*?:(.*)$/.exec(line);
    if (match && match[2]!.startsWith(fn)) return Number(match[1]!.replace(/,/g, ''));
  }
  return 0;
}

/** Runs `work` on every item, at most `width` at a time, and keeps the items' order. */
async function inPool<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

interface Job {
  host: string;
  guard: Guard;
  label: string;
}

/** One target: start it under callgrind, warm it up, count `requests` requests, read the dump. */
async function countTarget(job: Job, requests: number, dir: string, key: string, servers: ServerProcess[]): Promise<Count> {
  const id = `${job.host}-${job.guard}`;
  const out = join(dir, `${id}.callgrind`);
  const env = { BENCH_HOST: job.host, BENCH_GUARD: job.guard, BENCH_QUOTA_LIMIT: String(LIMIT), BENCH_SIGNING_KEY: key };
  const launcher = ['valgrind', '--quiet', '--tool=callgrind', `--callgrind-out-file=${out}`];
  const server = await startServer(`${id}-callgrind`, 'host-guard.ts', env, START_TIMEOUT_MS, launcher);
  servers.push(server);
  try {
    const token = await hostToken(server.url, job.guard);
    const target = { id, label: job.label, url: `${server.url}${PING_PATH}`, method: 'GET' as const, headers: { authorization: `Bearer ${token}` }, verify: isPingBody };
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let failed = 0;
    const send = async (count: number) => void (failed += await sequentialRequests(target, count, agent));
    let warmup = WARMUP_REQUESTS;
    let window: Window | undefined;
    try {
      await send(warmup);
      // Two windows past the compiler, the lower kept: code V8 has not optimised yet (a function
      // waiting for its turn, or deoptimised and compiled again) only ever adds instructions.
      let settled = 0;
      for (let index = 1; ; index++) {
        const counted = await countWindow(server.pid, out, index, () => send(requests));
        const quiet = counted.compiler / requests <= SETTLED_COMPILER_PER_REQUEST;
        if (quiet) settled += 1;
        else log(`  ${id}: the optimizing compiler still ran after ${warmup.toLocaleString('en-US')} requests, counting the next ${requests.toLocaleString('en-US')}`);
        if (window === undefined || (quiet && counted.total - counted.gc < window.total - window.gc) || !(window.compiler / requests <= SETTLED_COMPILER_PER_REQUEST)) {
          window = counted;
          warmup = WARMUP_REQUESTS + (index - 1) * requests;
        }
        if (settled === 2 || index === MAX_WINDOWS) break;
      }
    } finally {
      agent.destroy();
    }
    if (failed > 0) throw new Error(`${job.label}: ${failed} requests failed under callgrind`);
    if (window === undefined) throw new Error(`${job.label}: nothing was counted`);
    const count = {
      host: job.host,
      guard: job.guard,
      label: job.label,
      perRequest: (window.total - window.gc) / requests,
      gcPerRequest: window.gc / requests,
      compilerPerRequest: window.compiler / requests,
      warmup,
    };
    log(`  ${id}: ${fixed(count.perRequest, 0)} instructions/request, GC excluded (GC ${fixed(count.gcPerRequest, 0)}, compiler ${fixed(count.compilerPerRequest, 0)})`);
    return count;
  } finally {
    await server.stop();
    await rm(out, { force: true });
  }
}

const thousands = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');

function report(counts: readonly Count[], requests: number, valgrind: string): ProbeResult {
  const find = (host: string, guard: Guard) => counts.find((c) => c.host === host && c.guard === guard)!;
  return {
    ratios: [],
    tables: [
      table(
        ['Target', 'instructions/request, GC excluded', 'GC/request', 'optimizing compiler/request', 'counted after'],
        ['l', 'r', 'r', 'r', 'r'],
        counts.map((c) => [c.label, thousands(c.perRequest), thousands(c.gcPerRequest), thousands(c.compilerPerRequest), thousands(c.warmup)]),
      ),
      table(
        ['Host (instructions/request, GC excluded)', 'bare', 'headers alone', 'guard', 'guard − bare', 'headers − bare', 'guard − headers', 'bare ÷ guard'],
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        HOSTS.map(({ host, label }) => {
          const [bare, headers, guard] = (['off', 'headers', 'on'] as const).map((mode) => find(host, mode).perRequest) as [number, number, number];
          return [label, thousands(bare), thousands(headers), thousands(guard), thousands(guard - bare), thousands(headers - bare), thousands(guard - headers), fixed(bare / guard, 3)];
        }),
      ),
    ],
    notes: [
      `Each target is the hosts scenario's server (\`servers/host-guard.ts\`, same environment and token) in its own process under ${valgrind} (\`--tool=callgrind\`), at most ${PARALLEL} at a time. ${WARMUP_REQUESTS.toLocaleString('en-US')} sequential requests on one keep-alive connection warm it up; then \`callgrind_control -z\` zeroes the counters, ${requests.toLocaleString('en-US')} more requests go the same way, and \`callgrind_control -d\` dumps them. Instructions/request: every thread of the server process, over those requests.`,
      `While V8's optimizing compiler (TurboFan's background jobs) still runs more than ${SETTLED_COMPILER_PER_REQUEST} instructions per counted request, the code under test is not compiled yet: that count is discarded and the next ${requests.toLocaleString('en-US')} requests are counted, at most ${MAX_WINDOWS} times; of the first two counts past the compiler the lower stands (code not optimised yet only adds instructions). "Counted after" gives the requests answered before the count that stands; the compiler column what it still ran then (it stays in the count).`,
      `The garbage collector is left out (the inclusive count of \`${GC_FUNCTION}…)\` in \`callgrind_annotate --inclusive=yes\`) and given in its own column: under valgrind the collector runs on a timer-driven task, so its share follows wall time, not the code.`,
      'User space only: the kernel\'s work (the network stack, system calls) is not counted, so bare ÷ guard is not a throughput ratio and no goal is set. The figures show where the guard\'s own cost moves between changes of the code.',
    ],
    data: { requests, counts },
  };
}

export const instructionsScenario: Scenario = {
  name: 'instructions',
  title: 'Quota guard on Fastify, Hono, Express, Connect and Koa: user-space instructions per request under callgrind',
  notes: [],
  optIn: true,

  async setup(options) {
    const servers: ServerProcess[] = [];
    let dir: string | undefined;
    const cleanup = registerCleanup(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });
    const teardown = async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await cleanup();
    };
    const missing = await missingTool();
    if (missing) return { targets: [], teardown, probe: async () => ({ ratios: [], notes: [`\`${missing}\` not found (valgrind's callgrind is needed): nothing counted.`] }) };
    const valgrind = (await exec('valgrind', ['--version'])).stdout.trim();
    return {
      targets: [],
      teardown,
      async probe() {
        dir = await mkdtemp(join(tmpdir(), 'cpbench-callgrind-'));
        const key = await sharedSigningKey();
        const jobs = HOSTS.flatMap(({ host, label }) => MODES.map((mode) => ({ host, guard: mode.guard, label: mode.label(label) })));
        const counts = await inPool(jobs, PARALLEL, (job) => countTarget(job, options.requests, dir!, key, servers));
        return report(counts, options.requests, valgrind);
      },
    };
  },

  ratios: () => [],
};
