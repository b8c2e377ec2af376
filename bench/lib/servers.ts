/**
 * Servers under test run in child processes so that each gets its own event loop (and, on a
 * 2-core machine, competes with autocannon only through the OS scheduler, not inside one loop).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  name: string;
  url: string;
  /** The child's process id (for CPU pinning: lib/head-to-head.ts). */
  pid: number;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();

/** Last resort on exit or Ctrl-C: nothing may outlive the runner. */
export function killAllServers(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}

/**
 * Starts `bench/servers/<entry>` with `node --import tsx`, passes `env`, and resolves once the
 * child prints `READY <url>`. Rejects if it exits or stays silent for `timeoutMs`. With a
 * `launcher` (a command and its arguments, e.g. valgrind's), that command runs node; it must run
 * it in its own process, so that `pid` stays the server's.
 */
export function startServer(name: string, entry: string, env: Record<string, string>, timeoutMs = 60_000, launcher: readonly string[] = []): Promise<ServerProcess> {
  const node = [process.execPath, '--import', 'tsx', fileURLToPath(new URL(`../servers/${entry}`, import.meta.url))];
  const [command, ...args] = [...launcher, ...node];
  const child = spawn(command!, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    // stdin is a pipe only so that the child sees EOF when the runner dies, even by SIGKILL (lib/child.ts).
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => children.delete(child));

  let stopping = false;
  const stop = async () => {
    stopping = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name}: no READY line within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      // After READY this only matters as a warning: the runs will count the failed requests.
      if (!stopping) process.stderr.write(`[${name}] exited (${signal ?? code})\n`);
      reject(new Error(`${name}: exited (${signal ?? code}) before it was ready`));
    });
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const ready = /^READY (\S+)$/.exec(line);
      if (!ready) return void process.stderr.write(`[${name}] ${line}\n`);
      clearTimeout(timer);
      resolve({ name, url: ready[1]!, pid: child.pid!, stop });
    });
  });
}
