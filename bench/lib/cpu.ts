/**
 * The CPU time a server process spent, read from Linux's /proc: what a request costs the server
 * itself. Throughput also counts the time the server waited for a CPU; the CPU time per request
 * counts only the time it ran, so the report gives both. (A busy machine still slows each CPU
 * second through shared caches, so neither figure is free of the machine's other load.)
 *
 * `mainMs` is the main thread alone (the event loop: JavaScript, parsing, the HTTP stack);
 * `totalMs` adds libuv's thread pool (WebCrypto signatures, scrypt) and V8's helper threads
 * (garbage collection, compilation). Elsewhere than Linux both are undefined.
 */
import { readFileSync } from 'node:fs';

/** /proc reports times in clock ticks (proc(5): `sysconf(_SC_CLK_TCK)`), 100 a second on the usual Linux ABIs. */
const MS_PER_TICK = 10;

export interface CpuTime {
  totalMs: number;
  mainMs: number;
}

/** utime + stime of a /proc stat line (fields 14 and 15; the name in parentheses may hold spaces). */
function ticksOf(statLine: string): number {
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

export function cpuTime(pid: number): CpuTime | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const total = ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const main = ticksOf(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
    return { totalMs: total * MS_PER_TICK, mainMs: main * MS_PER_TICK };
  } catch {
    return undefined;
  }
}

/** Microseconds of CPU per request between two readings; undefined without both or without requests. */
export function cpuPerRequest(before: CpuTime | undefined, after: CpuTime | undefined, requests: number): { totalUs: number; mainUs: number } | undefined {
  if (!before || !after || requests <= 0) return undefined;
  return { totalUs: ((after.totalMs - before.totalMs) * 1000) / requests, mainUs: ((after.mainMs - before.mainMs) * 1000) / requests };
}
