/**
 * A TCP proxy on 127.0.0.1 between a client and a real server, for fault tests: `cut()` drops
 * every open connection and refuses new ones (accepted, then closed at once), `resume()` lets
 * new ones through again. Nothing else changes, so the client sees exactly an outage.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { listenOnLoopback } from './net.js';

export interface TcpProxy {
  /** Where clients connect instead of the server. */
  readonly port: number;
  readonly host: '127.0.0.1';
  /** Connections accepted and forwarded so far. */
  readonly connections: number;
  /** Destroys every current connection and refuses new ones until `resume()`. */
  cut(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let forwarded = 0;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const server: Server = createServer((downstream) => {
    track(downstream);
    if (refusing) {
      downstream.destroy();
      return;
    }
    forwarded++;
    const upstream = createConnection({ host: target.host, port: target.port });
    track(upstream);
    downstream.pipe(upstream);
    upstream.pipe(downstream);
    upstream.on('close', () => downstream.destroy());
    downstream.on('close', () => upstream.destroy());
  });
  const port = await listenOnLoopback(server);
  let closing: Promise<void> | undefined;

  return {
    port,
    host: '127.0.0.1',
    get connections() {
      return forwarded;
    },
    cut() {
      refusing = true;
      for (const socket of sockets) socket.destroy();
    },
    resume() {
      refusing = false;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        refusing = true;
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}

/** host and port of a redis:// or postgres:// URL. */
export function hostPort(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname || '127.0.0.1', port: parsed.port ? Number(parsed.port) : defaultPort };
}

/** The same URL pointed at the proxy. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = proxy.host;
  parsed.port = String(proxy.port);
  return parsed.toString();
}
