/**
 * The storage contract of the OAuth server: clients, authorization codes, tokens, grants and
 * consents. Memory, Redis and PostgreSQL implement it and one conformance suite checks all three.
 *
 * Codes and tokens are never stored in the clear: the store sees `TokenRef`s, the grant id plus the
 * SHA-256 of the secret part, so a leaked database holds nothing a caller could present. Every
 * token and code belongs to one grant (one authorization), and the grant id is part of its
 * reference so a store can keep all of a grant's keys together (one Redis Cluster slot).
 *
 * Expiry is enforced twice: the store drops a record by itself after `expiresAt` (TTL or
 * expires_at + clean-up), and readers never return a record whose `expiresAt` has passed.
 */

export type GrantType = 'authorization_code' | 'refresh_token';

export interface OAuthClientRecord {
  id: string;
  /** Shown on the consent page. */
  name: string;
  /** scrypt hash from `hashClientSecret`; absent for a public client (which must use PKCE). */
  secretHash?: string;
  /** Registered redirect URIs, matched by exact string comparison. */
  redirectUris: string[];
  /** Scopes this client may request. */
  scopes: string[];
  grants: GrantType[];
}

/** The signed-in user as the host's `authenticate` returned it, frozen at authorization time. */
export interface AuthorizedUser {
  sub: string;
  /** Claims for the id_token and userinfo (name, email, ...), filtered by scope when served. */
  claims: Record<string, unknown>;
}

/** Points at a code or token: the grant it belongs to and the SHA-256 (base64url) of its secret. */
export interface TokenRef {
  readonly grantId: string;
  readonly hash: string;
}

/** What every code and token record shares. */
export interface GrantBound {
  ref: TokenRef;
  clientId: string;
  scope: string[];
  user: AuthorizedUser;
  /** When the user signed in (seconds since the epoch), for the id_token's auth_time. */
  authTime: number;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface AuthorizationCodeRecord extends GrantBound {
  redirectUri: string;
  nonce?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256';
}

export type AccessTokenRecord = GrantBound;
export type RefreshTokenRecord = GrantBound;

export interface ConsumedMarker {
  /** True once the code was exchanged (or the refresh token rotated); the record stays as a tombstone. */
  consumed: boolean;
}

export interface OAuthStore {
  getClient(clientId: string): Promise<OAuthClientRecord | undefined>;
  /** Inserts or replaces a client. */
  saveClient(client: OAuthClientRecord): Promise<void>;

  saveCode(code: AuthorizationCodeRecord): Promise<void>;
  /** The code, consumed or not, until it expires; `undefined` when unknown or expired. */
  findCode(ref: TokenRef): Promise<(AuthorizationCodeRecord & ConsumedMarker) | undefined>;
  /** Marks the code consumed. Atomic: of any number of concurrent callers exactly one gets `true`. */
  consumeCode(ref: TokenRef): Promise<boolean>;

  /**
   * Stores the tokens of one grant. Answers `false` and stores nothing when the grant was revoked
   * (a code replay or refresh-token reuse raced this issuance).
   */
  saveTokens(tokens: { access: AccessTokenRecord; refresh?: RefreshTokenRecord }): Promise<boolean>;
  /**
   * One round trip: the whole record, or `undefined` when unknown, expired or revoked. Read it,
   * never change it: a store may hand the same frozen object to every caller (the memory store does).
   */
  findAccessToken(ref: TokenRef): Promise<AccessTokenRecord | undefined>;
  /**
   * Optional: the same lookup answered synchronously, for a store that lives in this process
   * (memory). The quota guard then validates a token without a promise.
   */
  findAccessTokenSync?(ref: TokenRef): AccessTokenRecord | undefined;
  /** The refresh token, rotated or not, until it expires; `undefined` when unknown, expired or revoked. */
  findRefreshToken(ref: TokenRef): Promise<(RefreshTokenRecord & ConsumedMarker) | undefined>;
  /** Marks the refresh token used. Atomic: exactly one concurrent caller gets `true`. */
  rotateRefreshToken(ref: TokenRef): Promise<boolean>;
  /**
   * Revokes a grant: every access and refresh token issued under it stops working at once, and
   * `saveTokens` refuses new ones for it until `until` (ms since the epoch).
   */
  revokeGrant(grantId: string, until: number): Promise<void>;

  /** Scopes the user already approved for this client, if any. */
  getConsent(sub: string, clientId: string): Promise<string[] | undefined>;
  /** Remembers approved scopes (replaces the previous set). */
  saveConsent(sub: string, clientId: string, scopes: string[]): Promise<void>;
}
