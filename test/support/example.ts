/**
 * The example server (`examples/express-server.ts`), run as `npm start` runs it, on a free port
 * of 127.0.0.1: ready once it prints "listening", stopped with SIGTERM (SIGKILL after 5 s, and
 * when the test worker exits without running its hooks).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { listenOnLoopback } from './net.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The example's own variables: unset unless a test gives them, so it starts on its defaults. */
const EXAMPLE_VARIABLES = [
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
];

async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RunningExample {
  base: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export async function startExample(options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<RunningExample> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of EXAMPLE_VARIABLES) delete env[name];
  Object.assign(env, { PORT: String(port), HOST: '127.0.0.1' }, options.env);
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/express-server.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  // A worker that dies without running afterAll must not leave the example behind.
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  child.once('exit', () => process.removeListener('exit', onExit));

  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the example did not print 'listening' within ${timeoutMs} ms`)), timeoutMs);
      const onData = () => {
        if (/listening/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the example exited early (code ${code}, signal ${signal})`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; its output:\n${output}`);
  }
  return { base: `http://127.0.0.1:${port}`, child, output: () => output, stop };
}
