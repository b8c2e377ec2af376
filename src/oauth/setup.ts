import OAuth2Server from '@node-oauth/oauth2-server';
import type { Clock } from '../core/clock.js';
import { configurationError, HostCallbackError, PlatformError, StoreUnavailableError } from '../core/errors.js';
import { StoreDataError } from '../core/store-errors.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { Logger } from '../core/logger.js';
import { isThenable, type MaybePromise } from '../core/maybe-promise.js';
import { isPlainObject } from '../core/plain-object.js';
import type { RouteDoc } from '../core/route-doc.js';
import type { Namespace, Route } from '../core/router.js';
import type { StoreConnection } from '../core/store-connection.js';
import { createStoreGuard } from '../core/store-guard.js';
import type { Telemetry } from '../core/telemetry.js';
import { authorizeDoc, consentDoc, handleAuthorize, handleConsent } from './authorize.js';
import { clientAuthFailureLimits } from './client-auth.js';
import { createSecretVerifier } from './client-secret.js';
import { issuerFor, type OAuthContext } from './context.js';
import { discoveryDoc, handleDiscovery, handleJwks, jwksDoc } from './discovery.js';
import type { EmitEvent } from './events.js';
import { clientRecordOf } from './client-record.js';
import { browserErrorResponse, formatPlatformErrorAsOAuth } from './errors.js';
import { handlePreflight, preflightDoc, readableCrossOrigin } from './cors.js';
import type { OAuthUser, ResolvedOAuthOptions } from './options.js';
import { createMemoryOAuthStore } from './store/memory.js';
import { startup } from './startup.js';
import { composeOAuthStore } from './store-pipeline.js';
import type { AccessTokenRecord, OAuthStore } from './store/types.js';
import { createFailureThrottle, guardedThrottle } from './throttle.js';
import { handleIntrospect, introspectDoc } from './introspection.js';
import { handleRevoke, revokeDoc } from './revocation.js';
import { handleToken, tokenDoc } from './token-endpoint.js';
import { parseToken } from './token-format.js';
import { rotationConfirmations } from './rotation-confirmations.js';
import { handleUserinfo, userinfoDoc } from './userinfo.js';
import { lockedAddresses } from './locked-addresses.js';
import { KNOWN_CALLERS_PER_CLIENT, knownCallerMarks, knownCallers } from './known-callers.js';

export interface OAuthShared {
  now: Clock;
  logger: Logger;
  bodyLimit: number;
  clientIp: (request: PlatformRequest) => string;
  telemetry: Telemetry;
  /** The host's `onEvent`, guarded. */
  emit: EmitEvent;
}

interface TokenIdentity {
  clientId: string;
  /** Absent for a client's own token (client_credentials). */
  sub?: string;
  scope: string[];
}

/**
 * A token whose stored grant record is damaged (StoreDataError: the store answered, about that
 * record) is no token: 401 invalid_token, and the application asks for a new one, which gets a
 * record of its own (docs/stores.md#deadlines-and-outages).
 */
function noTokenIfDamaged(error: unknown): undefined {
  if (error instanceof StoreUnavailableError && error.cause instanceof StoreDataError) return undefined;
  throw error;
}

function identityOf(record: AccessTokenRecord | undefined): TokenIdentity | undefined {
  if (!record) return undefined;
  return record.user ? { clientId: record.clientId, sub: record.user.sub, scope: record.scope } : { clientId: record.clientId, scope: record.scope };
}

/** Clocks of the host and of this process may differ by this much (an `auth_time` just ahead is fine). */
const AUTH_TIME_SKEW_SECONDS = 60;

/**
 * Why an `auth_time` cannot be the seconds since the epoch of a past sign-in, or undefined when
 * it can (a fraction, `Date.now() / 1000`, is a NumericDate too: RFC 7519 2). A wrong one would
 * silently switch off `max_age` and `prompt=login`: milliseconds (a `Date.now()`) read as a
 * sign-in far in the future, which no `max_age` finds too old.
 */
function authTimeProblem(authTime: unknown, nowSeconds: number): string | undefined {
  if (authTime === undefined) return undefined;
  if (typeof authTime !== 'number' || !Number.isFinite(authTime) || authTime < 0) return 'is not a number of seconds since the epoch';
  if (authTime > nowSeconds + AUTH_TIME_SKEW_SECONDS) return authTime > nowSeconds * 100 ? 'is in milliseconds (give seconds since the epoch)' : 'is in the future';
  return undefined;
}

/**
 * The host's `authenticate`, guarded: a throw, an answer without a string `sub`, or an
 * `auth_time` that is not the seconds of a past sign-in is logged once with its cause and
 * answered as a 500 that says the host's callback failed.
 */
function hostAuthenticate(authenticate: ResolvedOAuthOptions['authenticate'], logger: Logger, now: Clock) {
  return async (request: PlatformRequest): Promise<OAuthUser | undefined> => {
    if (!authenticate) return undefined;
    let user: unknown;
    try {
      user = await authenticate(request.raw);
    } catch (error) {
      logger.error({ path: request.path, err: error }, 'oauth.authenticate threw; the sign-in request was answered with a 500');
      throw new HostCallbackError('The sign-in check of this site failed (oauth.authenticate threw); the server log has details.', error);
    }
    if (user === null || user === undefined) return undefined;
    if (!isPlainObject(user) || typeof user.sub !== 'string' || user.sub === '') {
      const got = isPlainObject(user) ? `an object with ${Object.keys(user).join(', ') || 'no keys'}` : typeof user;
      logger.error({ path: request.path, returned: got }, 'oauth.authenticate must return null or a user with a non-empty string sub');
      throw new HostCallbackError('The sign-in check of this site returned a user without an id (oauth.authenticate gave no string sub); the server log has details.');
    }
    const problem = authTimeProblem(user.auth_time, Math.floor(now() / 1000));
    if (problem) {
      logger.error({ path: request.path, auth_time: String(user.auth_time) }, `oauth.authenticate returned an auth_time that ${problem}`);
      throw new HostCallbackError(`The sign-in check of this site returned an auth_time that ${problem} (oauth.authenticate); the server log has details.`);
    }
    // id_tokens carry whole seconds (OIDC Core 2).
    return (typeof user.auth_time === 'number' ? { ...user, auth_time: Math.floor(user.auth_time) } : user) as OAuthUser;
  };
}

/**
 * `oauth.publicUrl` names the platform's public origin and path prefix (docs/options.md): mounted
 * under `/api`, it must end with `/api`, or discovery advertises endpoints that answer 404.
 * The mount path is known only from a request; the first that shows the mistake warns, once.
 */
function publicUrlPrefixCheck(publicUrl: string | undefined, logger: Logger): (request: PlatformRequest) => void {
  if (!publicUrl) return () => undefined;
  const path = new URL(publicUrl).pathname.replace(/\/+$/, '');
  let warned = false;
  return (request) => {
    const prefix = request.mountPath;
    if (warned || !prefix || path.endsWith(prefix)) return;
    warned = true;
    logger.warn(
      { publicUrl, mountPath: prefix },
      `oauth.publicUrl (${publicUrl}) does not end with ${prefix}, the path the platform is mounted under: discovery advertises endpoints without it, which answer 404; set oauth.publicUrl to ${publicUrl}${prefix} (unless a proxy in front adds the prefix)`,
    );
  };
}

/** Tokens issued, by grant type, counted from the token life events. */
function withTokenMetrics(emit: EmitEvent, telemetry: Telemetry): EmitEvent {
  return (event) => {
    if (event.grantType && (event.type === 'token.issued' || event.type === 'token.refreshed')) telemetry.tokenIssued(event.grantType);
    emit(event);
  };
}

/** Resolves the OAuth options into the shared context and its routes. */
export interface OAuthServer {
  routes: Route[];
  namespace: Namespace;
  /** The first start attempt: resolves when keys and clients are in place; rejects with OAuthUnavailableError. */
  ready: Promise<void>;
  /** The application, user and scope of a live access token: one store round trip, none with the memory store. */
  verifyAccessToken(token: string): MaybePromise<TokenIdentity | undefined>;
  /**
   * Ends every grant of the user at the client and forgets the consent: the next authorization
   * asks again. Answers how many live grants ended, when the store tells.
   */
  revokeGrants(grants: { sub: string; clientId: string }): Promise<number | undefined>;
  /** What the admin API manages clients with. */
  clients: OAuthClientAdmin;
  /** Where the endpoints answer, for this request (`oauth.publicUrl`, else the request's origin). */
  issuer(request: PlatformRequest): string;
}

export interface OAuthClientAdmin {
  /** The store with its deadline, suspended clients included. */
  store: OAuthStore;
  /** Clients from `oauth.clients`: read-only through the admin API. */
  configuredIds: ReadonlySet<string>;
  /** A client was changed here: this process stops trusting what it knew of its status. */
  changed(clientId: string): void;
}

export function createOAuth(options: ResolvedOAuthOptions, shared: OAuthShared): OAuthServer {
  const { basePath, lifetimes } = options;
  const logger = shared.logger;
  const rawStore = options.store ?? createMemoryOAuthStore({ now: shared.now });
  const kind = (rawStore as { kind?: unknown }).kind;
  const storeName = typeof kind === 'string' ? `OAuth store (${kind})` : 'OAuth store';
  const connection = (rawStore as { connection?: StoreConnection }).connection;
  const storeGuard = createStoreGuard({
    name: storeName,
    timeoutMs: options.storeTimeoutMs,
    logger,
    onError: () => shared.telemetry.storeError(storeName),
    ...(connection?.lane ? { lane: connection.lane } : {}),
  });
  const configuredIds = new Set(options.clients.map((client) => client.id));
  const layers = composeOAuthStore(rawStore, {
    guard: storeGuard,
    configured: {
      ids: configuredIds,
      records: () => started.clients(),
      pinned: new Map(options.clients.map((client) => [client.id, clientRecordOf(client, undefined)])),
    },
    now: shared.now,
    lifetimes,
  });
  const { clients: store, status: clientStatus } = layers;
  const started = startup(options, logger, { name: storeName, ...(connection ? { connection } : {}), reach: () => layers.guarded.getClient('courier-platform-start') });
  if (options.signingKeys.length === 0) {
    logger.warn({}, 'oauth.signingKeys is not set: generating a signing key; id_tokens will not verify after a restart and other processes cannot share it, and a refresh token issued before a restart, older than the 16 generations its grant remembers, is merely unknown instead of a reuse that ends its grant (docs/oauth.md#tokens)');
  }
  if (!options.publicUrl) {
    logger.warn({}, "oauth.publicUrl is not set: the issuer follows each request's Host header and mount path; set it outside development");
  }
  if (!options.authenticate) logger.warn({}, 'oauth.authenticate is not set: no user can sign in; pass a function that returns the signed-in user');

  const context: OAuthContext = {
    store: layers.endpoints,
    get ready() {
      return started.ensure();
    },
    keyRing: started.keyRing,
    secret: () => started.keyRing().current.secret,
    now: shared.now,
    basePath,
    publicUrl: options.publicUrl,
    loginUrl: options.loginUrl,
    lifetimes: { ...lifetimes },
    refreshRetryGraceMs: options.refreshRetryGraceSeconds * 1000,
    lateWriteMs: options.storeTimeoutMs,
    confirmRotation: rotationConfirmations(rawStore, storeGuard, lifetimes.accessToken),
    bodyLimit: shared.bodyLimit,
    engine: new OAuth2Server({ model: {} as OAuth2Server.AuthorizationCodeModel }),
    secrets: createSecretVerifier({ now: shared.now }),
    rereadClient(clientId) {
      clientStatus.forget(clientId);
      return context.store.getClient(clientId);
    },
    lockedAddresses: lockedAddresses(shared.now),
    knownCallers: knownCallers(
      knownCallerMarks(rawStore, {
        lifetimeMs: options.bruteForce.knownCallerSeconds * 1000,
        most: KNOWN_CALLERS_PER_CLIENT,
        name: 'client-auth',
        now: shared.now,
      }),
      storeGuard,
      { lifetimeMs: options.bruteForce.knownCallerSeconds * 1000, now: shared.now },
    ),
    clientChecks: new Map(),
    clientAuthThrottle: guardedThrottle(
      createFailureThrottle({
        failures: clientAuthFailureLimits(options.bruteForce),
        windowSeconds: options.bruteForce.windowSeconds,
        name: 'client-auth',
        store: rawStore,
      }),
      storeGuard,
    ),
    logger,
    clientIp: shared.clientIp,
    emit: withTokenMetrics(shared.emit, shared.telemetry),
    telemetry: shared.telemetry,
    authenticate: hostAuthenticate(options.authenticate, logger, shared.now),
  };

  const json = formatPlatformErrorAsOAuth;
  const checkPrefix = publicUrlPrefixCheck(options.publicUrl, logger);
  type OAuthHandler = (r: PlatformRequest, c: OAuthContext) => Promise<PlatformResponse>;
  const route = (method: string, path: string, handler: OAuthHandler, doc: RouteDoc): Route => ({
    method,
    path: `${basePath}${path}`,
    handler: (request) => {
      checkPrefix(request);
      return handler(request, context);
    },
    formatError: json,
    doc,
  });
  /** A route browser apps on other origins call: its answers and its errors are readable there (cors.ts). */
  const crossOriginRoute = (method: string, path: string, handler: OAuthHandler, doc: RouteDoc): Route => {
    const plain = route(method, path, handler, doc);
    return {
      ...plain,
      handler: async (request, params) => readableCrossOrigin(await plain.handler(request, params)),
      formatError: (error) => readableCrossOrigin(json(error)),
    };
  };
  /** A page the user's browser shows: errors as the OAuth error page, or RFC 6749 JSON for a caller that asks for JSON only. */
  const browserRoute = (method: string, path: string, handler: OAuthHandler, doc: RouteDoc): Route => ({
    method,
    path: `${basePath}${path}`,
    doc,
    handler: (request) => {
      checkPrefix(request);
      return handler(request, context).catch((error: unknown) => {
        if (error instanceof PlatformError) return browserErrorResponse(error, request);
        throw error;
      });
    },
    formatError: (error) => browserErrorResponse(error),
  });
  const routes = [
    browserRoute('GET', '/authorize', handleAuthorize, authorizeDoc('GET')),
    browserRoute('POST', '/authorize', handleAuthorize, authorizeDoc('POST')),
    browserRoute('POST', '/consent', handleConsent, consentDoc),
    crossOriginRoute('POST', '/token', handleToken, tokenDoc),
    crossOriginRoute('POST', '/revoke', handleRevoke, revokeDoc),
    route('POST', '/introspect', handleIntrospect, introspectDoc),
    crossOriginRoute('GET', '/userinfo', handleUserinfo, userinfoDoc('GET')),
    crossOriginRoute('POST', '/userinfo', handleUserinfo, userinfoDoc('POST')),
    crossOriginRoute('OPTIONS', '/userinfo', handlePreflight, preflightDoc),
    crossOriginRoute('GET', '/jwks', handleJwks, jwksDoc),
    crossOriginRoute('GET', '/.well-known/openid-configuration', handleDiscovery, discoveryDoc),
  ];
  // The guard's per-call lookups, taken once: the memory store answers them synchronously.
  const findAccessTokenSync = store.findAccessTokenSync;
  const clientStatusSync = store.clientStatusSync;
  const accessTokenLifetimeMs = lifetimes.accessToken * 1000;
  return {
    routes,
    namespace: { prefix: basePath, formatError: json },
    ready: started.first,
    async revokeGrants({ sub, clientId } = {} as { sub: string; clientId: string }) {
      if (typeof sub !== 'string' || sub === '') throw configurationError('invalid_argument', 'sub', 'must be a non-empty string (platform.revokeGrants({ sub, clientId }))');
      if (typeof clientId !== 'string' || clientId === '') throw configurationError('invalid_argument', 'clientId', 'must be a non-empty string (platform.revokeGrants({ sub, clientId }))');
      const ended = await store.revokeUserGrants(sub, clientId);
      context.emit({ type: 'grant.revoked', clientId, sub });
      return typeof ended === 'number' ? ended : undefined;
    },
    verifyAccessToken(token) {
      const ref = parseToken(token);
      if (!ref) return undefined;
      if (!findAccessTokenSync) return context.store.findAccessToken(ref).then(identityOf, noTokenIfDamaged);
      // In-process store: synchronous while this client's status is known (see client-status.ts).
      const record = findAccessTokenSync(ref);
      if (!record) return undefined;
      // A suspension through the store itself shows at once.
      if (clientStatusSync && clientStatusSync(record.clientId) !== 'active') return undefined;
      const served = clientStatus.serve(record, accessTokenLifetimeMs);
      return isThenable(served) ? served.then(identityOf) : identityOf(served);
    },
    clients: {
      store,
      configuredIds,
      changed: (clientId) => clientStatus.forget(clientId),
    },
    issuer: (request) => issuerFor(context, request),
  };
}
