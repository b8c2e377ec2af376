/**
 * The JavaScript runtime the example runs on (Node, Bun or Deno), and how a fetch handler is
 * served on each: Node through @hono/node-server, Bun.serve and Deno.serve natively.
 */
import type { Server } from 'node:http';
import type { GetConnInfo } from 'hono/conninfo';
import type { RuntimeName } from './choice.js';
import { listenNode, type Listening } from './host.js';

declare const Bun:
  | { version: string; serve(options: { port: number; hostname: string; fetch(request: Request, server: unknown): Response | Promise<Response> }): { port: number; stop(closeActive?: boolean): Promise<void> } }
  | undefined;
declare const Deno:
  | {
      version: { deno: string };
      serve(
        options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
        handler: (request: Request, info: unknown) => Response | Promise<Response>,
      ): { shutdown(): Promise<void> };
    }
  | undefined;

type FetchHandler = (request: Request, env: unknown) => Response | Promise<Response>;

export const RUNTIME: RuntimeName = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';

/** "Node v20.19.0", "Bun 1.3.5", "Deno 2.6.0": for the start banner. */
export function runtimeLabel(): string {
  if (typeof Bun !== 'undefined') return `Bun ${Bun.version}`;
  if (typeof Deno !== 'undefined') return `Deno ${Deno.version.deno}`;
  return `Node ${process.version}`;
}

/** Hono's helper for the client's address, from the adapter of this runtime. */
export async function connInfoOfRuntime(): Promise<GetConnInfo> {
  if (RUNTIME === 'bun') return (await import('hono/bun')).getConnInfo;
  if (RUNTIME === 'deno') return (await import('hono/deno')).getConnInfo;
  return (await import('@hono/node-server/conninfo')).getConnInfo;
}

/** Bun and Deno name a busy port their own way; the start messages go by Node's codes. */
function withNodeCode(error: unknown): unknown {
  if (error instanceof Error && !('code' in error)) {
    if (error.name === 'AddrInUse' || /in use/i.test(error.message)) Object.assign(error, { code: 'EADDRINUSE' });
    else if (error.name === 'PermissionDenied') Object.assign(error, { code: 'EACCES' });
    else if (error.name === 'AddrNotAvailable') Object.assign(error, { code: 'EADDRNOTAVAIL' });
  }
  return error;
}

export async function serveFetch(fetch: FetchHandler, port: number, hostname: string): Promise<Listening> {
  if (typeof Bun !== 'undefined') {
    let server: ReturnType<typeof Bun.serve>;
    try {
      server = Bun.serve({ port, hostname, fetch });
    } catch (error) {
      throw withNodeCode(error);
    }
    return { port: server.port, close: () => server.stop(true) };
  }
  if (typeof Deno !== 'undefined') {
    const serve = Deno.serve;
    return new Promise((resolve, reject) => {
      try {
        const server = serve({ port, hostname, onListen: (addr) => resolve({ port: addr.port, close: () => server.shutdown() }) }, fetch);
      } catch (error) {
        reject(withNodeCode(error));
      }
    });
  }
  const { createAdaptorServer } = await import('@hono/node-server');
  return listenNode(createAdaptorServer({ fetch }) as Server, port, hostname);
}
