/**
 * `npm start` as an operator meets it: the example run as its own process. A port in use, a
 * wrong setting or a configuration the platform refuses is one clear line on stderr and exit
 * code 1, with no stack trace; nothing it started keeps the process alive.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../support/net.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs examples/express-server.ts as `npm start` does, until it exits (killed after `timeoutMs`). */
function runExample(env: Record<string, string>, timeoutMs = 60_000): Promise<Exit> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', ...env };
  for (const name of ['PUBLIC_URL', 'STORE', 'DEMO_REDIRECT_URI', 'COURIER_UPSTREAM_URL', 'OAUTH_SIGNING_KEY']) {
    if (!(name in env)) delete childEnv[name];
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/express-server.ts'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The example's own lines on stderr (the platform's logger may add its warnings). */
const exampleLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('courier-platform example:'));

function expectOneClearLine(exit: Exit, pattern: RegExp): void {
  expect(exit.code, `stdout: ${exit.stdout}\nstderr: ${exit.stderr}`).toBe(1);
  expect(exampleLines(exit.stderr)).toEqual([expect.stringMatching(pattern)]);
  expect(exit.stderr).not.toMatch(/\n\s+at /);
  expect(exit.stdout).not.toContain('listening');
}

describe('npm start refuses to start with one clear line and exit code 1', { timeout: 90_000 }, () => {
  const busy = createServer();
  let port: number;
  beforeAll(async () => {
    port = await listenOnLoopback(busy);
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('when the port is in use', async () => {
    const exit = await runExample({ PORT: String(port) });
    expectOneClearLine(exit, new RegExp(`^courier-platform example: port ${port} is in use; set PORT=`));
  });

  it('when a variable has a wrong value, naming it', async () => {
    const [port, store] = await Promise.all([runExample({ PORT: 'eighty' }), runExample({ PORT: '0', STORE: 'mongodb' })]);
    expectOneClearLine(port, /^courier-platform example: PORT must be a whole number/);
    expectOneClearLine(store, /^courier-platform example: STORE must be memory, redis or postgres, got "mongodb"/);
  });

  it('when ADMIN_TOKEN is too short to be a secret', async () => {
    const exit = await runExample({ PORT: '0', ADMIN_TOKEN: 'letmein' });
    expectOneClearLine(exit, /^courier-platform example: ADMIN_TOKEN must be at least 32 characters/);
    expect(exit.stderr).not.toContain('letmein');
  });

  it('when the store cannot be reached, saying where it was looked for without the password', async () => {
    const exit = await runExample({ PORT: '0', STORE: 'postgres', DATABASE_URL: 'postgres://app:hunter2-secret@127.0.0.1:1/app' });
    expectOneClearLine(exit, /^courier-platform example: cannot start: .*\(STORE=postgres at 127\.0\.0\.1:1\)$/);
    expect(exit.stdout + exit.stderr).not.toContain('hunter2-secret');
  });

  it('when the platform refuses the configuration, naming the option', async () => {
    const exit = await runExample({ PORT: '0', DEMO_CLIENT_SECRET: 'short' });
    expectOneClearLine(exit, /^courier-platform example: cannot start: .*secret.*at least 8 characters/);
  });
});
