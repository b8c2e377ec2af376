import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';

/** Listens on 127.0.0.1 and a free port (HTTP or plain TCP server); resolves the port. */
export async function listenOnLoopback(server: NetServer): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** A server listening on 127.0.0.1 on a random port. */
export interface Served {
  readonly server: Server;
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:0; close() also drops idle keep-alive and hanging connections. */
export async function serve(listener: RequestListener): Promise<Served> {
  const server = createServer(listener);
  const port = await listenOnLoopback(server);
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Reads a whole request or response stream as text. */
export async function readText(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One POST written by hand, for what supertest does not send: a body in several chunks, either
 * with `Transfer-Encoding: chunked` and no Content-Length, or with an exact Content-Length.
 */
export function rawPost(
  server: Server,
  path: string,
  headers: Record<string, string>,
  chunks: readonly (string | Buffer)[],
  framing: 'chunked' | 'content-length',
): Promise<RawResponse> {
  const { port } = server.address() as AddressInfo;
  const length = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk), 0);
  const framingHeader = framing === 'chunked' ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) };
  return new Promise<RawResponse>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, ...framingHeader }, agent: false });
    // A connection dropped before any response is reported as status 0, so the assertion shows it.
    let answered = false;
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!answered) resolve({ status: 0, headers: {}, text: `no response: ${error.code ?? error.message}` });
    });
    req.on('response', (res) => {
      answered = true;
      readText(res).then((text) => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }), reject);
    });
    const write = (index: number): void => {
      if (index === chunks.length) {
        req.end();
        return;
      }
      req.write(chunks[index], () => setImmediate(() => write(index + 1)));
    };
    write(0);
  });
}

/** A port that was free a moment ago on 127.0.0.1, for a child process to listen on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
