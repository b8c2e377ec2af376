/**
 * A TCP proxy on 127.0.0.1 between a client and a real server, for fault tests: `cut()` drops
 * every open connection and refuses new ones (accepted, then closed at once); `partition()` keeps
 * every connection open but holds what either side sends, and holds new connections unanswered,
 * the way a network partition looks to both ends; `resume()` ends either, delivering what a
 * partition held in order, as TCP's retransmission would. Nothing else changes, so the client
 * sees exactly an outage.
 *
 * With `delay`, it is a store in another zone instead: every chunk, either way, is delivered
 * `chunkMs` after it arrived (in order), and each new connection reaches the server
 * `connectMs` after it was accepted.
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
  /** Holds every byte and every new connection until `resume()`; nothing is closed or refused. */
  partition(): void;
  resume(): void;
  close(): Promise<void>;
}

export interface ProxyDelay {
  /** Added to every chunk, each way. */
  chunkMs?: number;
  /** Added once to each new connection, before it reaches the server. */
  connectMs?: number;
}

export async function startTcpProxy(target: { host: string; port: number }, delay: ProxyDelay = {}): Promise<TcpProxy> {
  const chunkMs = delay.chunkMs ?? 0;
  const connectMs = delay.connectMs ?? 0;
  // setTimeout runs callbacks with the same delay in the order they were set: chunks stay in order.
  const later = (ms: number, action: () => void) => (ms > 0 ? setTimeout(action, ms) : action());
  const sockets = new Set<Socket>();
  let refusing = false;
  let forwarded = 0;
  // While partitioned: what arrived, in order, to be delivered on resume.
  let held: (() => void)[] | undefined;
  const deliver = (action: () => void) => (held ? held.push(action) : action());
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
    const early: Buffer[] = [];
    const collect = (chunk: Buffer) => early.push(chunk);
    downstream.on('data', collect);
    const connect = () => {
      if (downstream.destroyed || refusing) {
        downstream.destroy();
        return;
      }
      const upstream = createConnection({ host: target.host, port: target.port });
      track(upstream);
      downstream.off('data', collect);
      for (const chunk of early) later(chunkMs, () => upstream.write(chunk));
      downstream.on('data', (chunk: Buffer) => later(chunkMs, () => deliver(() => upstream.write(chunk))));
      upstream.on('data', (chunk: Buffer) => later(chunkMs, () => deliver(() => downstream.write(chunk))));
      upstream.on('close', () => later(chunkMs, () => downstream.destroy()));
      downstream.on('close', () => later(chunkMs, () => upstream.destroy()));
    };
    deliver(() => later(connectMs, connect));
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
    partition() {
      held ??= [];
    },
    resume() {
      refusing = false;
      const actions = held ?? [];
      held = undefined;
      for (const action of actions) action();
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        refusing = true;
        held = undefined;
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
