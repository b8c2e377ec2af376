/**
 * The Koa and Connect examples (`npx tsx examples/koa-server.ts`, `examples/connect-server.ts`)
 * on a port that is already taken: one line naming the error and exit code 1, like `npm start`,
 * never a process that looks started.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../support/net.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function runUntilExit(script: string, port: number, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: String(port) };
  delete env.COURIER_UPSTREAM_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

describe('the Koa and Connect examples on a port in use', { timeout: 90_000 }, () => {
  const busy = createServer();
  let port: number;
  beforeAll(async () => {
    port = await listenOnLoopback(busy);
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it.each([
    ['Koa', 'examples/koa-server.ts'],
    ['Connect', 'examples/connect-server.ts'],
  ])('%s: exits with code 1 and one line naming EADDRINUSE', async (name, script) => {
    const exit = await runUntilExit(script, port);
    expect(exit.code, `stdout: ${exit.stdout}\nstderr: ${exit.stderr}`).toBe(1);
    const lines = exit.stderr.split('\n').filter((line) => line.startsWith(`courier-platform ${name} example:`));
    expect(lines).toEqual([`courier-platform ${name} example: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`]);
    expect(exit.stderr).not.toMatch(/\n\s+at /);
    expect(exit.stdout).not.toContain(`example on http://`);
  });
});
