import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequestError, configurationError, PayloadTooLargeError, type PlatformError } from '../src/core/errors.js';
import { NULL_BODY_STATUSES, type PlatformRequest, type PlatformResponse } from '../src/core/http.js';
import { isThenable, type MaybePromise } from '../src/core/maybe-promise.js';
import type { GuardVerdict } from '../src/guard/guard.js';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import { createPlatform, type Platform } from '../src/platform.js';
import type { CourierPlatformOptions } from '../src/options.js';
import type { QuotaIdentity } from '../src/quota/index.js';
import { requireGuard } from './guard.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `platform.quota()`: the calling application, its user and the granted scopes. */
    platformAuth?: QuotaIdentity;
  }
}

type Done = (error?: Error) => void;

/** A Fastify route hook (`onRequest` or `preHandler`) that guards the route with the quota. */
export type QuotaHook = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;

export interface FastifyPlatformRegisterOptions {
  /** Fastify's own register option: the platform's paths start with it. */
  prefix?: string;
}

export interface FastifyPlatform {
  (fastify: FastifyInstance, options: FastifyPlatformRegisterOptions): Promise<void>;
  readonly platform: Platform;
  /**
   * Guards one of the host's OpenAPI routes with the quota, as a route hook: 401, 429 or 503 are
   * answered through `reply`; otherwise the handler runs with `request.platformAuth` set and the
   * RateLimit headers on the reply. The endpoint counted is the request's path, or `apiPath`.
   */
  quota(apiPath?: string, doc?: GuardedRouteDoc): QuotaHook;
}

const NO_QUERY = new URLSearchParams();

/**
 * The path the guard counts a call under when it names no endpoint: the public path of the route
 * Fastify matched, whatever prefix the host registered it under. For a route without parameters
 * that is its own path, not the request's: Fastify's router also routes `/ping;x` to `/ping` (its
 * `useSemicolonDelimiter`, on by default in Fastify 4) and `//ping` (`ignoreDuplicateSlashes`),
 * and each such spelling would otherwise get an allowance of its own (docs/quota.md). A route
 * with parameters, or a hook that runs without a route, counts the request's path.
 */
function countedPathOf(request: FastifyRequest): string {
  // routeOptions is a getter that builds its object on each read: read once.
  const route = (request as { routeOptions?: { url?: unknown } }).routeOptions?.url;
  if (typeof route === 'string' && route.startsWith('/') && !route.includes(':') && !route.includes('*')) return route;
  return requestPathOf(request);
}

/** The request's public path, its query left out. */
function requestPathOf(request: FastifyRequest): string {
  const url = request.url;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function send(reply: FastifyReply, response: PlatformResponse): FastifyReply {
  // A refresh learns that its answer left once Node has written it (docs/oauth.md#tokens).
  if (response.onSent) reply.raw.once('finish', response.onSent);
  reply.code(response.status).headers(response.headers);
  // A 304 or 204 has no body: sent one (even '') Fastify adds `Content-Type: text/plain`, which a
  // cache refreshing its stored answer from a 304 would take over (RFC 9111 4.3.4).
  return NULL_BODY_STATUSES.has(response.status) ? reply.send() : reply.send(response.body);
}

/** A body that fails as Fastify failed to read it: the route that reads its body answers in its own format. */
async function* failing(error: PlatformError): AsyncGenerator<Uint8Array> {
  throw error;
}

/** The bytes the plugin's parser read, as the stream they came in: the core reads them as on every other host. */
async function* sent(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes;
}

function bodyFailure(error: FastifyError, bodyLimit: number): PlatformError | undefined {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PayloadTooLargeError(bodyLimit);
  if (error.statusCode !== undefined && error.statusCode < 500) return new BadRequestError('The request body could not be read');
  return undefined;
}

/**
 * The caller's address as the request arrived (`request.ip`, under trustProxy the forwarded one).
 * Fastify reads a body before the route runs, and once a caller hangs up part way through it the
 * socket has no address left: the platform still answers that request (the body failed), and
 * must count it from its caller, not as a request without an address (docs/deployment.md#clientip).
 */
const arrivedFrom = new WeakMap<FastifyRequest, string | undefined>();

function platformRequestOf(request: FastifyRequest, prefix: string, body?: AsyncIterable<Uint8Array>): PlatformRequest {
  const url = request.url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return {
    method: request.method,
    path: path.slice(prefix.length) || '/',
    mountPath: prefix,
    query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
    headers: request.headers,
    // The plugin's parser hands over the bytes as sent; the core applies its own rules (media type, coding, UTF-8, JSON).
    body: body ?? (Buffer.isBuffer(request.body) ? sent(request.body) : undefined),
    ip: arrivedFrom.get(request) ?? request.ip,
    // Fastify gives `request.ips` only when its trustProxy option is set.
    proxyTrusted: request.ips !== undefined,
    raw: request,
  };
}

function follow(verdict: GuardVerdict, request: FastifyRequest, reply: FastifyReply, done: Done): void {
  if (!verdict.pass) {
    send(reply, verdict.response);
    return;
  }
  reply.headers(verdict.headers);
  request.platformAuth = verdict.identity;
  done();
}

function isFastifyInstance(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'decorateRequest' in value && 'register' in value;
}

/**
 * The platform as a Fastify 4 or 5 plugin: its routes become Fastify routes under the register
 * prefix, with body parsers of their own (the platform's `bodyLimit`); the host's parsers and
 * routes are untouched.
 *
 * @example
 * import Fastify from 'fastify';
 * import { courierPlatform } from 'courier-platform/fastify';
 * const app = Fastify();
 * const platform = courierPlatform();
 * await app.register(platform);
 * app.get('/openapi/v1/orders', { preHandler: platform.quota() }, async (request) => ({ app: request.platformAuth?.clientId }));
 */
export function courierPlatform(options?: CourierPlatformOptions<FastifyRequest>): FastifyPlatform {
  if (isFastifyInstance(options)) {
    // Registered uncalled, Fastify calls it as the plugin: reject the load, so app.ready() fails with the reason.
    const error = configurationError('invalid_option', 'options', 'courierPlatform is a factory: register what it returns, app.register(courierPlatform(options))');
    return Promise.reject(error) as never;
  }
  const platform = createPlatform(options);
  const { bodyLimit } = platform;

  const routes = async (instance: FastifyInstance): Promise<void> => {
    const prefix = instance.prefix;
    // onRequest runs before the body is read, while the socket still has its peer.
    instance.addHook('onRequest', (request, _reply, done) => {
      arrivedFrom.set(request, request.ip);
      done();
    });
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));
    instance.setErrorHandler(async (error: FastifyError, request, reply) => {
      const failure = bodyFailure(error, bodyLimit);
      if (!failure) throw error;
      const response = await platform.handle(platformRequestOf(request, prefix, failing(failure)));
      if (!response) throw error;
      return send(reply, response);
    });
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const response = await platform.handle(platformRequestOf(request, prefix));
      // Fastify routes on the decoded path, the platform on the path as sent (as on every other
      // host): `/%61dmin/clients` reaches this route but is none of the platform's paths.
      if (!response) return reply.callNotFound();
      return send(reply, response);
    };
    const { routes: table, namespaces } = platform.routeTable();
    const paths = new Set([...table.map((route) => route.path), ...namespaces, ...namespaces.map((ns) => `${ns}/*`)]);
    // Every method Fastify routes (TRACE and its other known methods too), on every path: the
    // platform answers 405 with Allow, and 404 under its namespaces, never Fastify's own 404.
    for (const url of paths) instance.all(url, handler);
  };

  const plugin = async (fastify: FastifyInstance, registered: FastifyPlatformRegisterOptions): Promise<void> => {
    // A second platform in the same app (under another prefix) shares the decoration.
    if (!fastify.hasRequestDecorator('platformAuth')) fastify.decorateRequest('platformAuth', undefined);
    await fastify.register(routes, registered.prefix ? { prefix: registered.prefix } : {});
  };

  const quota = (apiPath?: string, doc?: GuardedRouteDoc): QuotaHook => {
    const guard = requireGuard(platform, apiPath, doc);
    // A named endpoint is counted under its name: the route's path need not be looked up.
    const pathOf = apiPath === undefined ? countedPathOf : requestPathOf;
    return (request, reply, done) => {
      let verdict: MaybePromise<GuardVerdict>;
      try {
        verdict = guard({ method: request.method, path: pathOf(request), query: NO_QUERY, headers: request.headers, raw: request }, apiPath);
      } catch (error) {
        return done(error as Error);
      }
      // With memory stores the verdict is already here: the handler runs in this tick.
      if (isThenable(verdict)) verdict.then((settled) => follow(settled, request, reply, done), done);
      else follow(verdict, request, reply, done);
    };
  };

  // fastify-plugin: the request decoration reaches the host's routes; the routes and their parsers stay in their own context.
  return Object.assign(fp(plugin, { name: 'courier-platform', fastify: '4.x || 5.x' }), { platform, quota });
}

export type { CourierPlatformOptions };
