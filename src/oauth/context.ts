import OAuth2Server from '@node-oauth/oauth2-server';
import type { Clock } from '../core/clock.js';
import type { PlatformRequest } from '../core/http.js';
import { requestOrigin } from '../core/request-origin.js';
import type { Logger } from '../core/logger.js';
import type { Telemetry } from '../core/telemetry.js';
import type { EmitEvent } from './events.js';
import type { KeyRing } from './keys.js';
import type { SecretVerifier } from './client-secret.js';
import type { OAuthUser } from './options.js';
import type { OAuthClientRecord, OAuthStore, TokenRef } from './store/types.js';
import type { FailureThrottle } from './throttle.js';
import type { LockedAddresses } from './locked-addresses.js';
import type { KnownCallers } from './known-callers.js';

export interface ResolvedLifetimes {
  code: number;
  accessToken: number;
  refreshToken: number;
  idToken: number;
}

/** Everything the OAuth endpoints share, resolved once at the factory. */
export interface OAuthContext {
  store: OAuthStore;
  /** Resolves once keys are loaded and configured clients are stored. */
  ready: Promise<void>;
  /** The signing keys; only after `ready`. */
  keyRing(): KeyRing;
  /** A secret shared by every process holding the same signing key: seals browser round trips. */
  secret(): Buffer;
  now: Clock;
  basePath: string;
  publicUrl: string | undefined;
  loginUrl: string;
  lifetimes: ResolvedLifetimes;
  /** Opt-in grace after a rotation for the token it rotated out (0: none; docs/oauth.md#tokens). */
  refreshRetryGraceMs: number;
  /**
   * The store deadline (`oauth.storeTimeoutMs`): a refresh that reaches the store after its caller
   * was answered 503 was asked for at least that long before the client's retry, and so tells a
   * late write from a concurrent one (rotateRefreshToken in store/types.ts).
   */
  lateWriteMs: number;
  /**
   * Tells the store a rotation's answer was written, trying again while it fails
   * (rotation-confirmations.ts); settles as the first try does.
   */
  confirmRotation(successor: TokenRef): Promise<void>;
  bodyLimit: number;
  engine: OAuth2Server;
  /** Checks a presented client secret against its stored hash (scrypt, successes remembered briefly). */
  secrets: SecretVerifier;
  /** The client as the store has it now, past what this process kept (suspended ones: undefined). */
  rereadClient(clientId: string): Promise<OAuthClientRecord | undefined>;
  /** Failed client authentications, per caller address with client id and per caller address. */
  clientAuthThrottle: FailureThrottle;
  /** The exact addresses that proved a client's secret recently, judged by their own failures while their /56 is at the limit. */
  knownCallers: KnownCallers;
  /** Addresses this process answered 429 at that limit: a remembered secret does not skip it for them. */
  lockedAddresses: LockedAddresses;
  /** Client authentications in progress, by caller address and credentials: one check serves them all. */
  clientChecks: Map<string, Promise<OAuthClientRecord>>;
  logger: Logger;
  authenticate(request: PlatformRequest): Promise<OAuthUser | undefined>;
  clientIp(request: PlatformRequest): string;
  /** Tells the host's `onEvent` about a token's life. */
  emit: EmitEvent;
  telemetry: Telemetry;
}

/**
 * `{auth_url}/oauth`. Without `publicUrl`, the origin the caller used and the path the host
 * mounted the platform on (fine for development; set `publicUrl` behind a proxy or TLS).
 */
export function issuerFor(context: OAuthContext, request: PlatformRequest): string {
  if (context.publicUrl) return `${context.publicUrl}${context.basePath}`;
  return `${requestOrigin(request)}${request.mountPath ?? ''}${context.basePath}`;
}

export const nowSeconds = (context: OAuthContext) => Math.floor(context.now() / 1000);
