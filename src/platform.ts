import { createAdmin, type AdminParts } from './admin/index.js';
import { clientAddress } from './core/client-address.js';
import { eventEmitter } from './core/events.js';
import { noTelemetry } from './core/telemetry.js';
import { createPrometheusTelemetry } from './metrics/prometheus.js';
import { systemClock } from './core/clock.js';
import { configurationError, PlatformError } from './core/errors.js';
import type { PlatformRequest, PlatformResponse } from './core/http.js';
import { consoleLogger, safeLogger, type Logger } from './core/logger.js';
import type { MaybePromise } from './core/maybe-promise.js';
import { Router } from './core/router.js';
import { courierCatalog } from './courier/catalog.js';
import type { ResolvedCourierOptions } from './courier/options.js';
import { courierErrorFormatter, courierRoutes } from './courier/proxy.js';
import { resolveSigner } from './courier/signing.js';
import { createHttpTransport, type CourierTransport } from './courier/transport.js';
import { createInProcessSandboxTransport } from './sandbox-transport.js';
import { createUsageRecorder, recordingTelemetry, type UsageRecorder } from './history/recorder.js';
import { createOAuth } from './oauth/setup.js';
import { apiDocumentRoute } from './openapi/document-route.js';
import { guardedRoutes, type GuardedRouteDoc } from './guard/guarded-doc.js';
import { getQuotaRoute, guardRequest, type GuardVerdict } from './guard/guard.js';
import { watchingUnnamedEndpoints } from './guard/unnamed-endpoints.js';
import { checkOptions, type CourierPlatformOptions, type PlatformEvent } from './options.js';
import { buildQuotaService, resolveQuotaConfig, type TokenVerifier } from './quota/index.js';

export interface Platform {
  /**
   * Answers a request that belongs to the platform, or resolves `undefined` so the adapter
   * passes it on to the host app untouched.
   */
  handle(request: PlatformRequest): Promise<PlatformResponse | undefined>;
  /**
   * Whether a path (relative to the mount point, no query) belongs to the platform. Adapters ask
   * first, so the host's own requests go on synchronously, without a request object or a promise.
   */
  owns(path: string): boolean;
  /**
   * Resolves once the OAuth server has done what only it can do asynchronously: generate a
   * signing key when none is configured, hash plain client secrets and store the configured
   * clients, and the stores' connections are warm (a pg pool's opened, a connecting Redis client
   * waited for, within 10 s; docs/deployment.md#start). Rejects, once, with an OAuthUnavailableError (code `oauth_unavailable`) whose
   * `cause` says why, e.g. a store that cannot be reached; /oauth then answers 503 and tries
   * again with each request. Every other mistake is thrown by `courierPlatform()` itself.
   */
  ready(): Promise<void>;
  /**
   * The quota guard for one of the host's OpenAPI calls. The endpoint is `apiPath` when given
   * (for parameterised routes: `/openapi/v1/orders/:id`), else the full public `request.path`.
   * Adapters wrap it as `platform.quota(apiPath?)`. Answers at once, without a promise, when the
   * token check and the quota store are in process (memory stores); await it either way.
   */
  readonly guard?: (request: PlatformRequest, apiPath?: string) => MaybePromise<GuardVerdict>;
  /**
   * Lists one of the host's guarded routes in the API document, with the guard's own answers
   * (401, 429, 503) and the quota headers. Adapters call it for `platform.quota(apiPath, doc)`.
   * @throws ConfigurationError (`invalid_argument`) without `apiPath`, or for a route described twice.
   */
  readonly describeGuarded?: (apiPath: string | undefined, doc: GuardedRouteDoc) => void;
  readonly logger: Logger;
  /**
   * Every route's method and path (`:name` for a parameter) and the prefixes the platform owns
   * whole, for hosts that register routes themselves (the Fastify plugin).
   */
  routeTable(): { routes: { method: string; path: string }[]; namespaces: string[] };
  /** The largest request body the platform reads, in bytes (`bodyLimit`), for hosts whose parsers read it. */
  readonly bodyLimit: number;
  /**
   * Ends every grant of the user at the client (its tokens stop working at once) and forgets the
   * consent, so the next authorization shows the consent page again. Rejects when OAuth is off.
   */
  revokeGrants(grants: { sub: string; clientId: string }): Promise<void>;
  /**
   * Writes the usage history this process counted and not yet sent (docs/operator.md#usage-history)
   * and stops its timer; call it before closing the stores. Never rejects for a store failure.
   */
  close(): Promise<void>;
}

function courierTransport(options: ResolvedCourierOptions, logger: Logger): CourierTransport {
  if (options.transport) return options.transport;
  if (options.upstreamUrl) return createHttpTransport({ url: options.upstreamUrl, timeoutMs: options.timeoutMs, retries: options.retries });
  logger.warn({}, 'courier.upstreamUrl is not set: courier calls go to the built-in sandbox, not a real courier platform');
  return createInProcessSandboxTransport(options.signer);
}

/**
 * Builds the framework-neutral platform; the adapters wrap this.
 * @throws ConfigurationError (a TypeError, code `invalid_option`) naming every bad option.
 */
export function createPlatform<Req>(rawOptions?: CourierPlatformOptions<Req>): Platform {
  const options = checkOptions(rawOptions);
  const logger = safeLogger(options.logger ?? consoleLogger);
  const { bodyLimit } = options;
  const now = options.now ?? systemClock;
  const clientIp = clientAddress(options.clientIp, logger);
  const router = new Router();
  const starting: Promise<void>[] = [];
  /** Where the host mounted the platform, as the last request the platform answered reached it. */
  let mountPath: string | undefined;

  // Metrics are collected while the admin API, which serves them, is on.
  const metrics = options.admin === false ? undefined : createPrometheusTelemetry(options.admin.registry);
  const telemetry = metrics ?? noTelemetry;
  const publicUrl = options.oauth === false ? undefined : options.oauth.publicUrl;
  const adminParts: Omit<AdminParts, 'registry'> = { logger, bodyLimit, now, clientIp, publicUrl };
  const emit = eventEmitter<PlatformEvent>(options.onEvent, now, logger);
  let verifyToken: TokenVerifier | undefined;
  let oauthIssuer: ((request: PlatformRequest) => string) | undefined;
  let revokeGrants: Platform['revokeGrants'] = async () => {
    throw configurationError('invalid_option', 'oauth', 'platform.revokeGrants needs the OAuth server, which is off (oauth: false)');
  };
  if (options.oauth !== false) {
    const oauth = createOAuth(options.oauth, { now, logger, bodyLimit, clientIp, telemetry, emit });
    router.addNamespace(oauth.namespace);
    for (const route of oauth.routes) router.add(route);
    starting.push(oauth.ready);
    verifyToken = oauth.verifyAccessToken;
    oauthIssuer = oauth.issuer;
    revokeGrants = async (grants) => {
      await oauth.revokeGrants(grants);
    };
    adminParts.oauth = { revokeGrants: (grants) => oauth.revokeGrants(grants), clients: oauth.clients };
  }

  let guard: Platform['guard'];
  let history: UsageRecorder | undefined;
  let describeGuarded: Platform['describeGuarded'];
  if (options.quota !== false) {
    const { basePath, verifyToken: hostVerify, history: historyOptions, ...counting } = options.quota;
    // checkOptions made sure one of the two is there.
    const verify = (hostVerify ?? verifyToken) as TokenVerifier;
    const config = resolveQuotaConfig({ ...counting, now, logger });
    // A damaged counter's warning names the admin API's reset where it answers: the host's mount
    // path is known only from a request, the last one the platform answered (docs/quota.md#damaged-data).
    if (options.admin !== false && config.store.usage) {
      const usagePath = `${options.admin.basePath}/usage`;
      config.counterReset = (clientId, apiPath) => {
        const query = new URLSearchParams({ client_id: clientId, api_path: apiPath });
        return mountPath === undefined
          ? `the admin API's DELETE ${usagePath}?${query} (below the path the platform is mounted on)`
          : `the admin API's DELETE ${mountPath}${usagePath}?${query}`;
      };
    }
    const quota = buildQuotaService(config, options.onEvent ? emit : undefined, () => telemetry.storeError('quota store'));
    // A store that cannot be warmed does not stop the platform: the quota follows onStoreError until it is back.
    starting.push(
      quota.ready().catch((error: unknown) => {
        logger.warn({ store: 'quota store', err: error }, `quota store not ready at start: ${error instanceof Error ? error.message : String(error)}`);
      }),
    );
    router.add(getQuotaRoute(basePath, quota, verify));
    if (config.store.rules) {
      adminParts.quota = {
        store: config.store.rules,
        configured: config.rules.list,
        defaults: config.defaults,
        storeGuard: quota.storeGuard,
        changed: () => quota.forgetRules(),
      };
    }
    if (config.store.usage) adminParts.usage = { usage: config.store.usage, quota, storeGuard: quota.storeGuard };
    if (historyOptions !== false && config.store.history) {
      const { flushIntervalMs, ...retention } = historyOptions;
      history = createUsageRecorder({ store: config.store.history, retention, flushIntervalMs, now, logger });
      adminParts.history = { history: config.store.history, retention, storeGuard: quota.storeGuard };
    }
    const guardTelemetry = history ? recordingTelemetry(telemetry, history) : telemetry;
    adminParts.quotaCountsClients = hostVerify === undefined;
    const { paths: extraPaths, ...info } = options.apiDocument;
    const guarded = guardedRoutes();
    describeGuarded = (apiPath, doc) => guarded.add(apiPath, doc);
    router.add(
      apiDocumentRoute(basePath, {
        routes: () => [...router.list(), ...guarded.list()],
        info,
        ...(publicUrl ? { publicUrl } : {}),
        ...(oauthIssuer ? { oauthIssuer } : {}),
        ...(extraPaths ? { extraPaths } : {}),
      }),
    );
    const watchedTelemetry = watchingUnnamedEndpoints(guardTelemetry, logger);
    guard = (request, apiPath) => guardRequest(request, quota, verify, apiPath, watchedTelemetry);
  }

  if (options.courier !== false) {
    const courier = options.courier;
    router.addNamespace({ prefix: courier.basePath, formatError: courierErrorFormatter });
    const routes = courierRoutes(courierCatalog, {
      basePath: courier.basePath,
      credentials: courier.credentials,
      version: courier.version,
      signer: resolveSigner(courier.signer),
      transport: courierTransport(courier, logger),
      bodyLimit,
      logger,
      telemetry,
    });
    for (const route of routes) router.add(route);
  }

  if (options.admin !== false && metrics) {
    const admin = createAdmin(options.admin, { ...adminParts, registry: metrics.registry });
    router.addNamespace(admin.namespace);
    for (const route of admin.routes) router.add(route);
  }

  const ready = Promise.all(starting).then(() => undefined);
  ready.catch(() => {}); // reported by each part's own logger; callers see it through ready()

  return {
    logger,
    ready: () => ready,
    guard,
    describeGuarded,
    revokeGrants: (grants) => revokeGrants(grants),
    close: async () => history?.close(),
    owns: (path) => router.owns(path),
    bodyLimit,
    routeTable: () => ({ routes: router.list().map(({ method, path }) => ({ method, path })), namespaces: router.namespacePrefixes() }),
    async handle(request) {
      const match = router.match(request.method, request.path);
      if (match.kind === 'none') return undefined;
      if (request.mountPath !== undefined) mountPath = request.mountPath;
      if (match.kind === 'error') return match.formatError(match.error);
      try {
        return await match.route.handler(request, match.params);
      } catch (error) {
        if (error instanceof PlatformError) return match.route.formatError(error);
        logger.error({ path: request.path, err: error }, 'unexpected error while handling a platform request');
        return match.route.formatError(new PlatformError('internal_error', 'Internal error; the platform log has details'));
      }
    },
  };
}
