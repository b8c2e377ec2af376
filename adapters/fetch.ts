import { configurationError } from '../src/core/errors.js';
import { NULL_BODY_STATUSES, type HeaderValue, type PlatformRequest, type PlatformResponse } from '../src/core/http.js';
import type { MaybePromise } from '../src/core/maybe-promise.js';
import type { GuardVerdict } from '../src/guard/guard.js';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import { createPlatform, type Platform } from '../src/platform.js';
import type { CourierPlatformOptions } from '../src/options.js';
import type { QuotaIdentity } from '../src/quota/index.js';
import { requireGuard } from './guard.js';

/**
 * What a fetch host hands its handler besides the request, from which the peer address is read:
 * Bun's `server` (`server.requestIP(request)`), Deno's `info` (`info.remoteAddr`), or
 * @hono/node-server's bindings (`incoming.socket`). Anything else leaves the address unknown;
 * behind a proxy, the `clientIp` option reads the header the operator trusts (docs/hosts.md).
 */
export interface FetchConnectionInfo {
  requestIP?(request: Request): { address: string } | null;
  remoteAddr?: { hostname?: string };
  incoming?: { socket?: { remoteAddress?: string }; headers?: Readonly<Record<string, HeaderValue>> };
}

/**
 * @hono/node-server hands over Node's own request, whose headers are already the record the core
 * reads: taking them spares building the Request's Headers, which that server does lazily.
 */
function nodeHeadersOf(info: unknown): Readonly<Record<string, HeaderValue>> | undefined {
  const headers = typeof info === 'object' && info !== null ? (info as FetchConnectionInfo).incoming?.headers : undefined;
  return typeof headers === 'object' && headers !== null ? headers : undefined;
}

/**
 * The request's body as a stream. @hono/node-server builds the Request behind `request.body` only
 * when it is read, from the Host header and the path, and a Host no URL can hold (`999.1.1.1`)
 * makes that throw; Node's own request is then the same body, unread (the other hosts answer
 * such a request as any other: docs/hosts.md).
 */
function bodyOf(request: Request, info: unknown): AsyncIterable<Uint8Array> | undefined {
  try {
    return (request.body ?? undefined) as unknown as AsyncIterable<Uint8Array> | undefined;
  } catch (error) {
    const incoming = typeof info === 'object' && info !== null ? (info as { incoming?: unknown }).incoming : undefined;
    if (typeof incoming === 'object' && incoming !== null && Symbol.asyncIterator in incoming) return incoming as AsyncIterable<Uint8Array>;
    throw error;
  }
}

/** The peer address a fetch host knows of: Bun, Deno and @hono/node-server each tell it their own way. */
export function peerAddressOf(request: Request, info: unknown): string | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const host = info as FetchConnectionInfo;
  if (typeof host.requestIP === 'function') return host.requestIP(request)?.address;
  return host.remoteAddr?.hostname ?? host.incoming?.socket?.remoteAddress;
}

/** A `.` or `..` segment (also as `%2e`), or a backslash: what the URL standard rewrites in a path. */
const UNRESOLVED_PATH = /\/(?:\.|%2e){1,2}(?:\/|$)|\\/i;

/**
 * Which path the platform sees: the one the host's router routes on, or the platform and its
 * quota guard would see another path than the host. Deno hands over the request target as the
 * client sent it (`/x/../oauth/token`), where Bun and @hono/node-server resolve it first. A fetch
 * host routes on `new URL(request.url).pathname`, which resolves it (RFC 3986 5.2.4): `resolved`.
 * Hono routes on the path as it came: `as-sent`.
 */
export type PathView = 'resolved' | 'as-sent';

/** `https://host/a/b?c` -> the path `/a/b` and the query `c`, without building a URL object. */
function splitUrl(url: string, view: PathView): { path: string; query: string } {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return { path: '/', query: '' };
  const q = url.indexOf('?', start);
  const hash = url.indexOf('#', start);
  const end = hash === -1 ? url.length : hash;
  const split = q === -1 || q > end ? { path: url.slice(start, end), query: '' } : { path: url.slice(start, q), query: url.slice(q + 1, end) };
  if (view === 'resolved' && UNRESOLVED_PATH.test(split.path)) {
    // A URL the runtime passed on unchecked may not parse; the path stays as sent, and its dot segments match no route of the platform.
    try {
      split.path = new URL(url).pathname;
    } catch {
      return split;
    }
  }
  return split;
}

function headersOf(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/**
 * A request's headers read one by one, as the quota guard reads them (the Authorization header):
 * a fetch server may build its Headers lazily (@hono/node-server does), and copying every header
 * of every guarded call would cost more than the guard's own work.
 */
function lazyHeaders(headers: Headers): Record<string, string | undefined> {
  return new Proxy({} as Record<string, string | undefined>, {
    get: (_target, name) => (typeof name === 'string' ? (headers.get(name) ?? undefined) : undefined),
    has: (_target, name) => typeof name === 'string' && headers.has(name),
    ownKeys: () => [...headers.keys()],
    getOwnPropertyDescriptor: (_target, name) =>
      typeof name === 'string' && headers.has(name) ? { value: headers.get(name), enumerable: true, configurable: true } : undefined,
  });
}

/** Where the host mounted the platform ('' at the root) and the path below it, or undefined outside it. */
function below(prefix: string, path: string): string | undefined {
  if (prefix === '') return path;
  if (path === prefix) return '/';
  return path.startsWith(prefix) && path.charCodeAt(prefix.length) === 0x2f ? path.slice(prefix.length) : undefined;
}

export interface FetchRequestParts {
  /** The host's own request object, handed to host callbacks (`authenticate`) as `raw`. */
  raw: unknown;
  /** What the runtime passed beside the request (Bun's server, Deno's info, @hono/node-server's bindings). */
  info: unknown;
  /** Where the platform is mounted: '' at the root. */
  prefix: string;
  /** The body as the host already read it, when it did (Hono caches what its middleware parsed). */
  parsedBody?: () => Promise<unknown>;
}

export interface PlatformPath {
  /** Below the prefix. */
  path: string;
  query: string;
}

/** The path below `prefix` when it is the platform's; synchronous, so the host's own requests go on at once. */
export function platformPathOf(platform: Platform, url: string, prefix: string, view: PathView = 'resolved'): PlatformPath | undefined {
  const { path: fullPath, query } = splitUrl(url, view);
  const path = below(prefix, fullPath);
  return path === undefined || !platform.owns(path) ? undefined : { path, query };
}

/** The core's view of a fetch request to one of the platform's paths. */
export async function fromFetchRequest(request: Request, { path, query }: PlatformPath, parts: FetchRequestParts): Promise<PlatformRequest> {
  const parsedBody = parts.parsedBody ? await parts.parsedBody() : undefined;
  return {
    method: request.method,
    path,
    mountPath: parts.prefix,
    query: new URLSearchParams(query),
    headers: nodeHeadersOf(parts.info) ?? headersOf(request),
    parsedBody,
    // A ReadableStream is async-iterable on Node, Bun and Deno; the core reads it within bodyLimit.
    body: parsedBody === undefined ? bodyOf(request, parts.info) : undefined,
    ip: peerAddressOf(request, parts.info),
    raw: parts.raw,
  };
}

const UTF8 = new TextEncoder();

export function toFetchResponse(response: PlatformResponse, head = false): Response {
  if (head && response.body !== null && !NULL_BODY_STATUSES.has(response.status)) {
    // RFC 9110 9.3.2 and 8.6: HEAD's Content-Length is the GET body's, which Bun and Deno would make 0.
    const length = String(UTF8.encode(response.body).byteLength);
    return new Response(null, { status: response.status, headers: { ...response.headers, 'content-length': length } });
  }
  const body = head || NULL_BODY_STATUSES.has(response.status) ? null : response.body;
  if (body === null || !response.onSent) return new Response(body, { status: response.status, headers: response.headers });
  const bytes = UTF8.encode(body);
  return new Response(sentOnceRead(bytes, response.onSent), {
    status: response.status,
    headers: { ...response.headers, 'content-length': String(bytes.byteLength) },
  });
}

/**
 * The body as a stream that reports when the host has taken all of it to write out: a fetch
 * handler has no `finish` event, and a refresh needs to know its answer left
 * (docs/oauth.md#tokens). A host that drops the response unread never reports it.
 */
function sentOnceRead(bytes: Uint8Array, onSent: () => void): ReadableStream<Uint8Array> {
  let given = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!given) {
        given = true;
        controller.enqueue(bytes);
        return;
      }
      controller.close();
      onSent();
    },
  });
}

/** What the quota guard decided for a fetch request. */
export type FetchGuardResult =
  /** Send `response` as it is: 401 without a valid token, 429 over the quota, 503 when a store is down. */
  | { pass: false; response: Response }
  /** Go on: `identity` is the calling application, `headers` the RateLimit headers to add to the answer. */
  | { pass: true; identity: QuotaIdentity; headers: Record<string, string> };

export type FetchGuard = (request: Request, info?: unknown) => Promise<FetchGuardResult>;

const NO_QUERY = new URLSearchParams();

/**
 * The core's quota guard on a fetch request, shared with the Hono adapter: it reads only the
 * method, the path and the headers the guard asks for, and its verdict is there at once when the
 * stores answer at once (memory), so a host can go on in the same tick.
 */
export function fetchRequestGuard(
  platform: Platform,
  apiPath?: string,
  doc?: GuardedRouteDoc,
  view: PathView = 'resolved',
): (request: Request, raw: unknown, info: unknown) => MaybePromise<GuardVerdict> {
  const guard = requireGuard(platform, apiPath, doc);
  return (request, raw, info) => {
    const headers = nodeHeadersOf(info) ?? lazyHeaders(request.headers);
    return guard({ method: request.method, path: splitUrl(request.url, view).path, query: NO_QUERY, headers, raw }, apiPath);
  };
}

export interface FetchHostOptions {
  /** The path the host serves the platform under (`/api` for a Next.js `app/api/[...all]` route); '' at the root. */
  prefix?: string;
}

export interface FetchPlatform {
  /**
   * Answers a request to one of the platform's paths; resolves `undefined` for every other path,
   * so the host goes on to its own routes. `info` is what the runtime passes beside the request
   * (Bun's server, Deno's connection info), for the caller's address.
   */
  (request: Request, info?: unknown): Promise<Response | undefined>;
  readonly platform: Platform;
  /**
   * The quota guard for one of the host's OpenAPI routes (docs/hosts.md): `{ pass: false, response }`
   * to send as it is, or `{ pass: true, identity, headers }` with the RateLimit headers to add.
   */
  quota(apiPath?: string, doc?: GuardedRouteDoc): FetchGuard;
}

/** A mount prefix: '' or a path that starts with '/' and does not end with one. */
export function checkPrefix(prefix: string | undefined): string {
  const value = prefix ?? '';
  if (value !== '' && (!value.startsWith('/') || value.endsWith('/'))) {
    throw configurationError('invalid_option', 'prefix', `must start with '/' and not end with one (got '${value}')`);
  }
  return value;
}

/**
 * The platform as a fetch handler, for Bun, Deno, Node (with @hono/node-server or any fetch
 * server) and frameworks built on `Request`/`Response`.
 *
 * @example
 * import { courierPlatform } from 'courier-platform/fetch';
 * const platform = courierPlatform();
 * Bun.serve({ fetch: async (req, server) => (await platform(req, server)) ?? new Response('Not found', { status: 404 }) });
 */
export function courierPlatform(options?: CourierPlatformOptions<Request>, host: FetchHostOptions = {}): FetchPlatform {
  const prefix = checkPrefix(host.prefix);
  const platform = createPlatform(options);
  const handler = async (request: Request, info?: unknown): Promise<Response | undefined> => {
    const at = platformPathOf(platform, request.url, prefix);
    if (!at) return undefined;
    const response = await platform.handle(await fromFetchRequest(request, at, { raw: request, info, prefix }));
    return response && toFetchResponse(response, request.method === 'HEAD');
  };
  const quota = (apiPath?: string, doc?: GuardedRouteDoc): FetchGuard => {
    const guard = fetchRequestGuard(platform, apiPath, doc);
    return async (request, info) => {
      const verdict = await guard(request, request, info);
      return verdict.pass ? verdict : { pass: false, response: toFetchResponse(verdict.response, request.method === 'HEAD') };
    };
  };
  return Object.assign(handler, { platform, quota });
}

export type { CourierPlatformOptions };
