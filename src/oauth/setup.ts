import OAuth2Server from '@node-oauth/oauth2-server';
import type { Clock } from '../core/clock.js';
import type { PlatformError } from '../core/errors.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { Logger } from '../core/logger.js';
import type { MaybePromise } from '../core/maybe-promise.js';
import type { Namespace, Route } from '../core/router.js';
import { handleAuthorize, handleConsent } from './authorize.js';
import { SUPPORTED_SCOPES } from './claims.js';
import { createSecretVerifier, hashClientSecret, isClientSecretHash } from './client-secret.js';
import type { OAuthContext } from './context.js';
import { handleDiscovery, handleJwks } from './discovery.js';
import { eventEmitter } from './events.js';
import { formatPlatformErrorAsOAuth } from './errors.js';
import { loadKeyRing, type KeyRing } from './keys.js';
import type { OAuthClientConfig, OAuthOptions, OAuthUser } from './options.js';
import { errorPage } from './pages.js';
import { createMemoryOAuthStore } from './store/memory.js';
import type { AccessTokenRecord, OAuthClientRecord } from './store/types.js';
import { createFailureThrottle } from './throttle.js';
import { handleIntrospect } from './introspection.js';
import { handleRevoke } from './revocation.js';
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
  const grants = config.grants ?? ['authorization_code', 'refresh_token'];
  // RFC 6749 4.4: only a client that can authenticate may act on its own behalf.
  if (grants.includes('client_credentials') && secretHash === undefined) {
    throw new TypeError(`oauth.clients[${config.id}].grants has client_credentials, which needs a secret or secretHash`);
  }
  return {
    id: config.id,
    name: config.name ?? config.id,
    ...(secretHash === undefined ? {} : { secretHash }),
    redirectUris: [...config.redirectUris],
    scopes: [...scopes],
    grants: [...grants],
    ...(config.introspect ? { introspect: true } : {}),
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
  /** Absent for a client's own token (client_credentials). */
  sub?: string;
  scope: string[];
}

function identityOf(record: AccessTokenRecord | undefined): TokenIdentity | undefined {
  if (!record) return undefined;
  return record.user ? { clientId: record.clientId, sub: record.user.sub, scope: record.scope } : { clientId: record.clientId, scope: record.scope };
}

/** Resolves the OAuth options into the shared context and its routes. */
export interface OAuthServer {
  routes: Route[];
  namespace: Namespace;
  ready: Promise<void>;
  /** The application, user and scope of a live access token: one store round trip, none with the memory store. */
  verifyAccessToken(token: string): MaybePromise<TokenIdentity | undefined>;
  /** Ends every grant of the user at the client and forgets the consent: the next authorization asks again. */
  revokeGrants(grants: { sub: string; clientId: string }): Promise<void>;
}

export function createOAuth(options: OAuthOptions, shared: OAuthShared): OAuthServer {
  const basePath = options.basePath ?? '/oauth';
  const store = options.store ?? createMemoryOAuthStore({ now: shared.now });
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
    clientAuthThrottle: createFailureThrottle({
      failures: options.bruteForce?.clientAuthFailures ?? 10,
      windowSeconds: options.bruteForce?.windowSeconds ?? 900,
      name: 'client-auth',
      store,
    }),
    logger: shared.logger,
    clientIp: shared.clientIp,
    emit: eventEmitter(options.onEvent, shared.now, shared.logger),
    authenticate: async (request) => (options.authenticate ? normalizeUser(await options.authenticate(request.raw)) : undefined),
  };

  const json = formatPlatformErrorAsOAuth;
  const html = (error: PlatformError): PlatformResponse =>
    errorPage(error.status, error.status >= 500 ? 'server_error' : 'invalid_request', error.message);
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
    route('POST', '/revoke', handleRevoke),
    route('POST', '/introspect', handleIntrospect),
    route('GET', '/userinfo', handleUserinfo),
    route('POST', '/userinfo', handleUserinfo),
    route('GET', '/jwks', handleJwks),
    route('GET', '/.well-known/openid-configuration', handleDiscovery),
  ];
  return {
    routes,
    namespace: { prefix: basePath, formatError: json },
    ready,
    async revokeGrants({ sub, clientId } = {} as { sub: string; clientId: string }) {
      if (typeof sub !== 'string' || sub === '' || typeof clientId !== 'string' || clientId === '') {
        throw new TypeError('platform.revokeGrants needs { sub, clientId }, both non-empty strings');
      }
      await store.revokeUserGrants(sub, clientId);
      context.emit({ type: 'grant.revoked', clientId, sub });
    },
    verifyAccessToken(token) {
      const ref = parseToken(token);
      if (!ref) return undefined;
      if (store.findAccessTokenSync) return identityOf(store.findAccessTokenSync(ref));
      return store.findAccessToken(ref).then(identityOf);
    },
  };
}
