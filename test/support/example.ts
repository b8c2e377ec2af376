/**
 * The example server run as `npm start` runs it (`examples/server.ts`), with only the variables
 * a test gives: `startExample()` on a free port of 127.0.0.1, ready once it prints "listening" and
 * stopped with SIGTERM (SIGKILL after 5 s, and when the test worker exits without running its
 * hooks); `runExample()` until it exits, for the ways it refuses to start. On Bun and Deno the
 * entry runs the runtime's binary as its child: both live in a process group of their own, and
 * the signal goes to the group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './net.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The example's own variables: unset unless a test gives them, so it starts on its defaults. */
const EXAMPLE_VARIABLES = [
  'EXAMPLE_FRAMEWORK',
  'EXAMPLE_RUNTIME',
  'PUBLIC_URL',
  'STORE',
  'REDIS_CLUSTER_NODES',
  'DEMO_CLIENT_ID',
  'DEMO_CLIENT_SECRET',
  'DEMO_REDIRECT_URI',
  'COURIER_UPSTREAM_URL',
  'OAUTH_SIGNING_KEY',
  'QUOTA_MINUTE',
  'QUOTA_DAY',
  'QUOTA_MONTH',
  'ADMIN_TOKEN',
];

function spawnExample(env: Record<string, string>): { child: ChildProcess; output: () => string; signal: (name: NodeJS.Signals) => void } {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', NO_COLOR: '1', DENO_DIR: `${ROOT}test/artifacts/deno` };
  for (const name of EXAMPLE_VARIABLES) delete childEnv[name];
  Object.assign(childEnv, env);
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/server.ts'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group has exited already
    }
  };
  // A worker that dies without running its hooks must not leave the example behind.
  const onExit = () => signal('SIGKILL');
  process.once('exit', onExit);
  child.once('exit', () => process.removeListener('exit', onExit));
  return { child, output: () => output, signal };
}

export interface Exit {
  code: number | null;
  /** stdout and stderr, in the order they came. */
  output: string;
}

/** Runs the example until it exits (killed after `timeoutMs`). */
export function runExample(env: Record<string, string>, timeoutMs = 60_000): Promise<Exit> {
  const { child, output, signal } = spawnExample(env);
  const killer = setTimeout(() => signal('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, output: output() });
    });
  });
}

export interface RunningExample {
  base: string;
  port: number;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export async function startExample(options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<RunningExample> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const port = await freePort();
  const { child, output, signal } = spawnExample({ PORT: String(port), ...options.env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    signal('SIGTERM');
    const killer = setTimeout(() => signal('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };

  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the example did not print 'listening' within ${timeoutMs} ms`)), timeoutMs);
      child.stdout!.on('data', () => {
        if (/listening/.test(output())) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, exitSignal) => {
        clearTimeout(timer);
        reject(new Error(`the example exited early (code ${code}, signal ${exitSignal})`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; its output:\n${output()}`);
  }
  return { base: `http://127.0.0.1:${port}`, port, child, output, stop };
}
