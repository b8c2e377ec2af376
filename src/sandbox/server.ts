/**
 * The node:http wrapper of a sandbox. POST on any path except `/_sandbox/...` is an upstream call
 * answered by `sandbox.handle()` with HTTP 200; `/_sandbox/pre_orders/confirm|cancel` are the
 * control endpoints. No per-request logging; keep-alive friendly.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { configurationError } from '../core/errors.js';
import { isPlainObject } from '../core/plain-object.js';
import { SandboxCode, SandboxError, show } from './codes.js';
import type { RunningSandbox, Sandbox, SandboxListenOptions } from './types.js';

/** Largest accepted request body: 1 MiB. */
export const SANDBOX_BODY_LIMIT_BYTES = 1024 * 1024;

const CONTROL_PREFIX = '/_sandbox/';
const JSON_TYPE = 'application/json; charset=utf-8';

type ControlAction = (sandbox: Sandbox, appId: string, preorderId: string) => Record<string, unknown>;

const CONTROL_ACTIONS: ReadonlyMap<string, ControlAction> = new Map<string, ControlAction>([
  [
    '/_sandbox/pre_orders/confirm',
    (sandbox, appId, preorderId) => ({ preorderId, statusId: 2, orderId: sandbox.confirmPreOrder(appId, preorderId) }),
  ],
  [
    '/_sandbox/pre_orders/cancel',
    (sandbox, appId, preorderId) => {
      sandbox.cancelPreOrder(appId, preorderId);
      return { preorderId, statusId: 0 };
    },
  ],
]);

function send(res: ServerResponse, status: number, body: unknown, extraHeaders?: Record<string, string>): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(payload),
    ...extraHeaders,
  });
  res.end(payload);
}

function sendError(res: ServerResponse, status: number, code: SandboxCode, message: string, extraHeaders?: Record<string, string>): void {
  send(res, status, { code, message, data: null }, extraHeaders);
}

function pathOf(url: string | undefined): string {
  if (!url) return '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Reads the whole body, at most `limit` bytes; `onBody(null)` when it is larger. */
function readBody(req: IncomingMessage, limit: number, onBody: (body: Buffer | null) => void): void {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    onBody(null);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  req.on('data', (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > limit) {
      done = true;
      chunks.length = 0;
      onBody(null);
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    onBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
  });
  req.on('error', () => {
    done = true;
  });
}

function answerControl(sandbox: Sandbox, path: string, body: unknown, res: ServerResponse): void {
  const action = CONTROL_ACTIONS.get(path);
  if (!action) {
    sendError(res, 404, SandboxCode.UNKNOWN_ENDPOINT, `unknown sandbox endpoint ${show(path)}; known: ${[...CONTROL_ACTIONS.keys()].join(', ')}`);
    return;
  }
  const params = isPlainObject(body) ? body : {};
  const { appId, preorderId } = params;
  if (typeof appId !== 'string' || typeof preorderId !== 'string' || appId === '' || preorderId === '') {
    sendError(res, 400, SandboxCode.INVALID_PARAMETER, 'invalid parameter: body must be {"appId": string, "preorderId": string}');
    return;
  }
  try {
    send(res, 200, { code: SandboxCode.OK, message: 'ok', data: action(sandbox, appId, preorderId) });
  } catch (error) {
    if (error instanceof SandboxError) {
      // 40002 -> 400, 40402 -> 404, 40905 -> 409: the HTTP status is the code's first three digits.
      sendError(res, Math.floor(error.code / 100), error.code, error.message);
    } else {
      sendError(res, 500, SandboxCode.INTERNAL_ERROR, 'internal sandbox error');
    }
  }
}

function onRequest(sandbox: Sandbox, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') {
    req.resume();
    sendError(res, 405, SandboxCode.METHOD_NOT_ALLOWED, `method ${req.method ?? ''} not allowed: send POST with a JSON body`, {
      allow: 'POST',
    });
    return;
  }
  readBody(req, SANDBOX_BODY_LIMIT_BYTES, (raw) => {
    if (raw === null) {
      // Stop reading and close the connection after answering: the rest of the body is not wanted.
      sendError(res, 413, SandboxCode.BODY_TOO_LARGE, `body is larger than ${SANDBOX_BODY_LIMIT_BYTES} bytes`, {
        connection: 'close',
      });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      sendError(res, 400, SandboxCode.MALFORMED_BODY, 'body is not valid JSON');
      return;
    }
    const path = pathOf(req.url);
    if (path.startsWith(CONTROL_PREFIX)) answerControl(sandbox, path, body, res);
    else send(res, 200, sandbox.handle(body));
  });
}

/** Starts a node:http server answering for `sandbox`. */
export function listenSandbox(sandbox: Sandbox, options: SandboxListenOptions = {}): Promise<RunningSandbox> {
  const port = options.port ?? 0;
  const host = options.host ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return Promise.reject(configurationError('invalid_option', 'port', `sandbox.listen: must be an integer 0..65535, got ${show(port)}`));
  }
  if (typeof host !== 'string' || host === '') {
    return Promise.reject(configurationError('invalid_option', 'host', `sandbox.listen: must be a non-empty string, got ${show(host)}`));
  }
  const server = createServer((req, res) => onRequest(sandbox, req, res));
  return new Promise<RunningSandbox>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const urlHost = address.family === 'IPv6' || host.includes(':') ? `[${address.address}]` : host;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://${urlHost}:${address.port}`,
        port: address.port,
        close() {
          closing ??= new Promise<void>((done, failed) => {
            server.close((error) => (error ? failed(error) : done()));
            server.closeAllConnections();
          });
          return closing;
        },
      });
    });
  });
}
