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
