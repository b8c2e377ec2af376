/**
 * Head-to-head ratios: two servers loaded at the same time, both pinned to the same CPU while
 * the runner (autocannon) runs on the others. Both then see the same machine at the same
 * moment, and the ratio of their req/s is the inverse ratio of their CPU cost per request.
 *
 * Why: on a shared VM a server's req/s drifts by ±30 % between sequential runs seconds apart
 * (CPU steal, the scheduler putting autocannon on the server's core), which buries the few
 * per cent a check is about. Loaded together on one pinned core, the per-round ratios agree far
 * better; the method keeps a bias of a few per cent of its own, which the A/A control (two
 * identical servers) in every report measures.
 *
 * Pinning uses `taskset` (util-linux) and needs Linux and two CPUs; elsewhere the pair runs
 * unpinned and says so. Only the runner's own processes are pinned (never Redis or PostgreSQL),
 * and every affinity is restored afterwards.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { loadTest } from './load.js';
import type { Target } from './scenario.js';
import type { ServerProcess } from './servers.js';
import { median } from './stats.js';

const WARMUP_S = 3;

export interface Contender {
  target: Target;
  server: ServerProcess;
}

export interface HeadToHeadOptions {
  rounds: number;
  durationS: number;
  /** Split evenly between the two servers. */
  connections: number;
}

export interface HeadToHead {
  /** req/s of `b` ÷ req/s of `a`, per round. */
  ratios: number[];
  median: number;
  /** Both servers shared one CPU and the runner stayed off it. */
  pinned: boolean;
  errors: number;
}

function taskset(args: string[]): string {
  return execFileSync('taskset', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

/** The CPU list a process may run on, e.g. `0,1`; undefined when taskset cannot tell. */
function affinityOf(pid: number): string | undefined {
  try {
    return /: (\S+)\s*$/.exec(taskset(['-c', '-p', String(pid)]))?.[1];
  } catch {
    return undefined;
  }
}

/** Pins every thread of `pid` to `cpus`; false when it could not. */
function pin(pid: number, cpus: string): boolean {
  try {
    taskset(['-a', '-c', '-p', cpus, String(pid)]);
    return true;
  } catch {
    return false;
  }
}

/** Servers on the last CPU, the runner on the others; returns how to undo it, or undefined. */
function pinPair(a: ServerProcess, b: ServerProcess): (() => void) | undefined {
  const cpus = availableParallelism();
  if (process.platform !== 'linux' || cpus < 2) return undefined;
  const before = [process.pid, a.pid, b.pid].map((pid) => [pid, affinityOf(pid)] as const);
  if (before.some(([, list]) => list === undefined)) return undefined;
  const restore = () => {
    for (const [pid, list] of before) pin(pid, list!);
  };
  const server = String(cpus - 1);
  const runner = cpus === 2 ? '0' : `0-${cpus - 2}`;
  if (pin(a.pid, server) && pin(b.pid, server) && pin(process.pid, runner)) return restore;
  restore();
  return undefined;
}

/** Loads `a` and `b` together for `rounds` runs of `durationS`; the ratio is b ÷ a. */
export async function headToHead(a: Contender, b: Contender, options: HeadToHeadOptions): Promise<HeadToHead> {
  const connections = Math.max(1, Math.floor(options.connections / 2));
  const restore = pinPair(a.server, b.server);
  const ratios: number[] = [];
  let errors = 0;
  try {
    // Under the same pinning, not counted: a server that has not been loaded yet runs cold code
    // for its first seconds.
    await Promise.all([loadTest(a.target, connections, WARMUP_S), loadTest(b.target, connections, WARMUP_S)]);
    const run = (target: Target) => loadTest(target, connections, options.durationS);
    for (let round = 0; round < options.rounds; round++) {
      // The order alternates, so neither server is always the one whose load starts first (in
      // an A/A pair that one gets about 1 % less).
      const aFirst = round % 2 === 0;
      const first = run(aFirst ? a.target : b.target);
      const second = run(aFirst ? b.target : a.target);
      const [ra, rb] = await Promise.all(aFirst ? [first, second] : [second, first]);
      errors += ra.errors + rb.errors;
      ratios.push(rb.rps / ra.rps);
    }
  } finally {
    restore?.();
  }
  return { ratios, median: median(ratios), pinned: restore !== undefined, errors };
}
