/** Used inside bench/servers/* entries, which run as child processes of the runner. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../src/index.js';

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${process.argv[1]}: environment variable ${name} is required`);
  return value;
}

/** Tells the runner where we listen, and exits on SIGTERM/SIGINT or when the runner's pipe closes. */
export function announceReady(url: string, close: () => Promise<void> | void): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 2_000).unref();
    void Promise.resolve(close()).finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The runner holds our stdin open; EOF means it is gone (even if it was SIGKILLed).
  process.stdin.on('end', stop).resume();
  process.stdout.write(`READY ${url}\n`);
}

/** Listens on 127.0.0.1 and a free port; resolves the origin. */
export function listenLocal(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

/** Closes a child's server at once, keep-alive connections included. */
export function stopServer(server: Server): void {
  server.closeAllConnections();
  server.close();
}

/**
 * The platform's logger in a child: silent except for the first few warnings and errors. A
 * failure must be visible, but one line per failed request under load would measure the console.
 */
export function quietLogger(name: string): Logger {
  let reported = 0;
  const report = (fields: unknown, message: string) => {
    if (++reported <= 5) console.error(`[${name}] ${message}`, fields);
  };
  return { debug() {}, info() {}, warn: report, error: report };
}
