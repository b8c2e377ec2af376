import OAuth2Server from '@node-oauth/oauth2-server';
import type { Clock } from '../core/clock.js';
import type { PlatformError } from '../core/errors.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { Logger } from '../core/logger.js';
import type { MaybePromise } from '../core/maybe-promise.js';
import type { Namespace, Route } from '../core/router.js';
import { createStoreGuard, guardMethods, type StoreGuard } from '../core/store-guard.js';
import { handleAuthorize, handleConsent } from './authorize.js';
import { SUPPORTED_SCOPES } from './claims.js';
import { createSecretVerifier, hashClientSecret, isClientSecretHash } from './client-secret.js';
import type { OAuthContext } from './context.js';
import { handleDiscovery, handleJwks } from './discovery.js';
import { formatPlatformErrorAsOAuth, oauthErrorCode } from './errors.js';
import { loadKeyRing, type KeyRing } from './keys.js';
import type { OAuthClientConfig, OAuthOptions, OAuthUser } from './options.js';
import { errorPage } from './pages.js';
import { createMemoryOAuthStore } from './store/memory.js';
import type { AccessTokenRecord, OAuthClientRecord } from './store/types.js';
import { createFailureThrottle, type FailureThrottle } from './throttle.js';
import { handleToken } from './token-endpoint.js';
import { parseToken } from './token-format.js';
import { handleUserinfo } from './userinfo.js';

export interface OAuthShared {
  now: Clock;
  logger: Logger;
  bodyLimit: number;
  clientIp: (request: PlatformRequest) => string;
}

const DEFAULT_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

async function clientRecord(config: OAuthClientConfig): Promise<OAuthClientRecord> {
  let secretHash = config.secretHash;
  if (secretHash !== undefined && !isClientSecretHash(secretHash)) {
    throw new TypeError(`oauth.clients[${config.id}].secretHash is not a hash from hashClientSecret()`);
  }
  if (config.secret !== undefined) secretHash = await hashClientSecret(config.secret);
  const scopes = config.scopes ?? DEFAULT_SCOPES;
  const unknown = scopes.filter((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new TypeError(`oauth.clients[${config.id}].scopes has unsupported scopes: ${unknown.join(' ')}`);
  return {
    id: config.id,
    name: config.name ?? config.id,
    ...(secretHash === undefined ? {} : { secretHash }),
    redirectUris: [...config.redirectUris],
    scopes: [...scopes],
    grants: [...(config.grants ?? ['authorization_code', 'refresh_token'])],
  };
}

function normalizeUser(value: unknown): OAuthUser | undefined {
  if (value === null || value === undefined) return undefined;
  const user = value as OAuthUser;
  if (typeof user !== 'object' || typeof user.sub !== 'string' || user.sub === '') {
    throw new TypeError('oauth.authenticate must return null or an object with a non-empty string sub');
  }
  return user;
}

interface TokenIdentity {
  clientId: string;
  sub: string;
  scope: string[];
}

function identityOf(record: AccessTokenRecord | undefined): TokenIdentity | undefined {
  return record && { clientId: record.clientId, sub: record.user.sub, scope: record.scope };
}

/**
 * The throttle's counters live in the same store: its calls get the same deadline and outage log.
 * A reservation the outage kept from being given back (or that landed after its deadline) is given
 * back when the store is back, so an outage does not count as failed authentications and lock the
 * client out.
 */
function guardedThrottle(throttle: FailureThrottle, guard: StoreGuard): FailureThrottle {
  const releaseWhenBack = (release: () => Promise<void>, tries: number): Promise<void> =>
    guard.run(release).catch((error: unknown) => {
      if (tries > 1) guard.whenBack(() => void releaseWhenBack(release, tries - 1).catch(() => undefined));
      throw error;
    });
  return {
    attempt(names) {
      const started = throttle.attempt(names);
      return guard.run(() => started).then(
        (attempt) => ({ retryAfter: attempt.retryAfter, release: () => releaseWhenBack(() => attempt.release(), 5) }),
        (error: unknown) => {
          // Late but done (a client may queue commands until it reconnects): nobody was answered, give it back.
          started.then((late) => releaseWhenBack(() => late.release(), 5)).catch(() => undefined);
          throw error;
        },
      );
    },
  };
}

/** Resolves the OAuth options into the shared context and its routes. */
export interface OAuthServer {
  routes: Route[];
  namespace: Namespace;
  ready: Promise<void>;
  /** The application, user and scope of a live access token: one store round trip, none with the memory store. */
  verifyAccessToken(token: string): MaybePromise<TokenIdentity | undefined>;
}

export function createOAuth(options: OAuthOptions, shared: OAuthShared): OAuthServer {
  const basePath = options.basePath ?? '/oauth';
  const rawStore = options.store ?? createMemoryOAuthStore({ now: shared.now });
  const kind = (rawStore as { kind?: unknown }).kind;
  const storeGuard = createStoreGuard({
    name: typeof kind === 'string' ? `OAuth store (${kind})` : 'OAuth store',
    timeoutMs: options.storeTimeoutMs ?? 1000,
    logger: shared.logger,
  });
  const store = guardMethods(rawStore, storeGuard);
  let keyRing: KeyRing | undefined;
  const ready = (async () => {
    keyRing = await loadKeyRing(options.signingKeys ?? [], (message) => shared.logger.warn({}, message));
    const clients = await Promise.all((options.clients ?? []).map(clientRecord));
    for (const client of clients) await store.saveClient(client);
  })();
  // A failure shows up in every OAuth answer; keep it from also being an unhandled rejection.
  ready.catch((error: unknown) => shared.logger.error({ err: error }, 'the OAuth server could not start'));
  if (!options.publicUrl) {
    shared.logger.warn({}, 'oauth.publicUrl is not set: the issuer follows each request\'s Host header; set it outside development');
  }
  if (!options.authenticate) shared.logger.warn({}, 'oauth.authenticate is not set: no user can sign in; pass a function that returns the signed-in user');

  const context: OAuthContext = {
    store,
    ready,
    keyRing: () => keyRing!,
    secret: () => keyRing!.current.secret,
    now: shared.now,
    basePath,
    publicUrl: options.publicUrl?.replace(/\/+$/, ''),
    loginUrl: options.loginUrl ?? '/login',
    lifetimes: {
      code: options.lifetimes?.code ?? 60,
      accessToken: options.lifetimes?.accessToken ?? 3600,
      refreshToken: options.lifetimes?.refreshToken ?? 14 * 24 * 3600,
      idToken: options.lifetimes?.idToken ?? 3600,
    },
    bodyLimit: shared.bodyLimit,
    engine: new OAuth2Server({ model: {} as OAuth2Server.AuthorizationCodeModel }),
    verifySecret: createSecretVerifier(),
    clientAuthThrottle: guardedThrottle(
      createFailureThrottle({
        failures: options.bruteForce?.clientAuthFailures ?? 10,
        windowSeconds: options.bruteForce?.windowSeconds ?? 900,
        name: 'client-auth',
        store: rawStore,
      }),
      storeGuard,
    ),
    logger: shared.logger,
    clientIp: shared.clientIp,
    authenticate: async (request) => (options.authenticate ? normalizeUser(await options.authenticate(request.raw)) : undefined),
  };

  const json = formatPlatformErrorAsOAuth;
  const html = (error: PlatformError): PlatformResponse =>
    errorPage(error.status, oauthErrorCode(error), error.message);
  const route = (method: string, path: string, handler: (r: PlatformRequest, c: OAuthContext) => Promise<PlatformResponse>, formatError = json): Route => ({
    method,
    path: `${basePath}${path}`,
    handler: (request) => handler(request, context),
    formatError,
  });
  const routes = [
    route('GET', '/authorize', handleAuthorize, html),
    route('POST', '/authorize', handleAuthorize, html),
    route('POST', '/consent', handleConsent, html),
    route('POST', '/token', handleToken),
    route('GET', '/userinfo', handleUserinfo),
    route('POST', '/userinfo', handleUserinfo),
    route('GET', '/jwks', handleJwks),
    route('GET', '/.well-known/openid-configuration', handleDiscovery),
  ];
  return {
    routes,
    namespace: { prefix: basePath, formatError: json },
    ready,
    verifyAccessToken(token) {
      const ref = parseToken(token);
      if (!ref) return undefined;
      if (store.findAccessTokenSync) return identityOf(store.findAccessTokenSync(ref));
      return store.findAccessToken(ref).then(identityOf);
    },
  };
}
