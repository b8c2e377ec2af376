/**
 * `npm start` as an operator meets it: the example run as its own process. A port in use, a
 * wrong setting or a configuration the platform refuses is one clear line on stderr and exit
 * code 1, with no stack trace; nothing it started keeps the process alive.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExample, type Exit } from '../support/example.js';
import { listenOnLoopback } from '../support/net.js';

/** The example's own lines (the platform's logger may add its warnings). */
const exampleLines = (output: string) => output.split('\n').filter((line) => line.startsWith('courier-platform example:'));

function expectOneClearLine(exit: Exit, pattern: RegExp): void {
  expect(exit.code, exit.output).toBe(1);
  expect(exampleLines(exit.output)).toEqual([expect.stringMatching(pattern)]);
  expect(exit.output).not.toMatch(/\n\s+at /);
  expect(exit.output).not.toContain('listening');
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

  it('when EXAMPLE_FRAMEWORK or EXAMPLE_RUNTIME names no host, listing the ones there are', async () => {
    const [framework, runtime, pairing] = await Promise.all([
      runExample({ PORT: '0', EXAMPLE_FRAMEWORK: 'sinatra' }),
      runExample({ PORT: '0', EXAMPLE_FRAMEWORK: 'hono', EXAMPLE_RUNTIME: 'workerd' }),
      runExample({ PORT: '0', EXAMPLE_RUNTIME: 'bun' }),
    ]);
    expectOneClearLine(framework, /^courier-platform example: EXAMPLE_FRAMEWORK must be express, koa, connect, fastify or hono, got "sinatra"$/);
    expectOneClearLine(runtime, /^courier-platform example: EXAMPLE_RUNTIME must be node, bun or deno, got "workerd"$/);
    expectOneClearLine(pairing, /^courier-platform example: EXAMPLE_RUNTIME=bun runs the Hono example only: set EXAMPLE_FRAMEWORK=hono/);
  });

  it('when ADMIN_TOKEN is too short to be a secret', async () => {
    const exit = await runExample({ PORT: '0', ADMIN_TOKEN: 'letmein' });
    expectOneClearLine(exit, /^courier-platform example: ADMIN_TOKEN must be at least 32 characters/);
    expect(exit.output).not.toContain('letmein');
  });

  it('when the store cannot be reached, saying where it was looked for without the password', async () => {
    const exit = await runExample({ PORT: '0', STORE: 'postgres', DATABASE_URL: 'postgres://app:hunter2-secret@127.0.0.1:1/app' });
    expectOneClearLine(exit, /^courier-platform example: cannot start: .*\(STORE=postgres at 127\.0\.0\.1:1\)$/);
    expect(exit.output).not.toContain('hunter2-secret');
  });

  it('when the platform refuses the configuration, naming the option', async () => {
    const exit = await runExample({ PORT: '0', DEMO_CLIENT_SECRET: 'short' });
    expectOneClearLine(exit, /^courier-platform example: cannot start: .*secret.*at least 8 characters/);
  });
});
