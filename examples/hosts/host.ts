/**
 * What examples/server.ts needs of a host: the platform's readiness and a listening server.
 * Each framework's file builds its app the way that framework's users do, and mounts the
 * guarded API route before the site's pages, so API calls never pass through page handling.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  port: number;
  close(): Promise<void>;
}

export interface ExampleHost {
  /** Resolves once the platform's signing keys are loaded and its stores answer. */
  ready(): Promise<void>;
  /** Rejects with the server's own error (EADDRINUSE, EACCES, ...) when it cannot listen. */
  listen(port: number, hostname: string): Promise<Listening>;
  /** Writes the usage history the platform counted and not yet sent (docs/operator.md#usage-history): before the stores close. */
  close(): Promise<void>;
}

/**
 * The example's shutdown (Ctrl-C, SIGTERM): stop taking requests, let the platform write what it
 * still holds (the usage history of the last seconds), then close the stores it writes to.
 */
export async function stopExample(listening: Listening, host: ExampleHost, site: { close(): Promise<void> }): Promise<void> {
  await listening.close();
  await host.close();
  await site.close();
}

/** A header of a Node request as one string. */
export const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

/** Listens with a Node HTTP server, the way Express, Connect and Koa apps are served. */
export function listenNode(server: Server, port: number, hostname: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((closed) => {
            server.close(() => closed());
            server.closeAllConnections();
          }),
      });
    });
  });
}
