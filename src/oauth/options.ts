import type { OAuthStore, GrantType } from './store/types.js';
import type { SigningKeyInput } from './keys.js';

/** The signed-in user as the host's `authenticate` returns it. */
export interface OAuthUser {
  /** Stable, unique user id: the id_token's `sub`. */
  sub: string;
  /** When the user signed in, seconds since the epoch. Needed for `max_age` and `prompt=login` to be exact. */
  auth_time?: number;
  /** Claims released by scope: name, preferred_username, email, email_verified, ... */
  [claim: string]: unknown;
}

export interface OAuthClientConfig {
  id: string;
  /** Shown on the consent page. Default: the id. */
  name?: string;
  /** From `hashClientSecret()`. */
  secretHash?: string;
  /** A plain secret is accepted for convenience and hashed at start-up; prefer `secretHash`. */
  secret?: string;
  /** Exact redirect URIs. */
  redirectUris: string[];
  /** Allowed scopes. Default: openid profile email offline_access. */
  scopes?: string[];
  /** Default: authorization_code and refresh_token. */
  grants?: GrantType[];
}

export interface OAuthLifetimes {
  /** Seconds. Default 60. */
  code?: number;
  /** Seconds. Default 3600. */
  accessToken?: number;
  /** Seconds. Default 14 days. */
  refreshToken?: number;
  /** Seconds. Default 3600. */
  idToken?: number;
}

export interface BruteForceOptions {
  /** Failed client authentications allowed per client id and per IP in `windowSeconds`. Default 10. */
  clientAuthFailures?: number;
  /** Default 900 (15 minutes). */
  windowSeconds?: number;
}

export interface OAuthOptions<Req = unknown> {
  /**
   * The signed-in user of this request, or null. The host owns users and sessions; `req` is the
   * framework's own request (Express/Connect `req`, Koa `ctx`).
   */
  authenticate?: (req: Req) => OAuthUser | null | undefined | Promise<OAuthUser | null | undefined>;
  /** The host's login page; it receives `return_to` and must send the user back there. Default `/login`. */
  loginUrl?: string;
  /** The platform's public origin (and path prefix), e.g. `https://api.example.com`. Default: from the Host header. */
  publicUrl?: string;
  clients?: OAuthClientConfig[];
  /** Default: in memory. */
  store?: OAuthStore;
  /**
   * Deadline of each store call, in ms. A call that fails or is late answers 503 (RFC 6749
   * `temporarily_unavailable`) instead of hanging. Default 1000.
   */
  storeTimeoutMs?: number;
  /** Private keys (PEM or JWK), newest first: the first signs, all are published. Default: generated. */
  signingKeys?: SigningKeyInput[];
  lifetimes?: OAuthLifetimes;
  bruteForce?: BruteForceOptions;
  /** Where the server answers. Default `/oauth`. */
  basePath?: string;
}
