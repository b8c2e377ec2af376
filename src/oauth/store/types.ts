/**
 * The storage contract of the OAuth server: clients, consents and grants. Memory, Redis and
 * PostgreSQL implement it and one conformance suite checks all three.
 *
 * A grant is one authorization: a user approved a client for a scope, and the authorization code,
 * the access tokens and the refresh token issued from it all belong to it. A store keeps ONE
 * record per grant (an object, a Redis hash, a PostgreSQL row), and that record's size is bounded
 * by design however often the grant is refreshed. It holds:
 *
 * - the authorization code record as saved (client, user, granted scope, auth_time, redirect_uri,
 *   nonce, PKCE challenge), the code's hash and expiry, and whether it was exchanged;
 * - a generation counter: 0 until the first tokens are issued, then one more per refresh;
 * - the current refresh token (hash, expiry, when it was installed, and whether its rotation is
 *   still *pending*: its answer not yet written to the client), the previous generation's (hash,
 *   expiry, when it was rotated out), and the hashes and expiries of the ones before it, newest
 *   first and unexpired, `EARLIER_REFRESH_TOKENS` (16) earlier tokens in all. A presented token
 *   is recognised as an earlier generation only by its hash in this list, so a reuse is known
 *   authentically (RFC 9700 4.14.2): knowing a grant id never lets anyone revoke the grant, and
 *   a token older than the list is merely unknown;
 * - the live access tokens: the current one and the previous one (hash, scope, expiry). A
 *   refresh retires every access token older than the previous one, so an access token stops
 *   working two refreshes after it was issued, or when it expires, whichever comes first.
 *
 * Codes and tokens are never stored in the clear: the store sees `TokenRef`s, the grant id plus
 * the SHA-256 of the secret part, so a leaked database holds nothing a caller could present.
 *
 * A grant's life: `saveCode` creates the record, `consumeCode` marks the one exchange,
 * `issueTokens` stores the first tokens, `rotateRefreshToken` performs each refresh as one atomic
 * step and `confirmRotation` records that its answer was written, `revokeGrant` deletes
 * the record.
 *
 * Why a rotation is pending until confirmed: a refresh whose answer was lost (the store committed
 * but the call timed out, the connection dropped) must not cost the user the grant, yet a
 * rotated-out token presented again must end it. So the outcome is known rather than guessed from
 * time: while the rotation's answer has not been written, the token it rotated out may repeat it,
 * and the repeat replaces the successor nobody received. The replaced successor joins the earlier
 * generations, so if it did reach someone (two parties racing with one token), presenting it
 * later is a reuse that ends the grant. Once the answer was written (`confirmRotation`), or the
 * successor was presented, the rotated-out token is a reuse like any earlier one.
 *
 * The record goes by itself once its last part expires (TTL, or expires_at and a clean-up), and
 * readers never return a part whose `expiresAt` passed.
 */

import type { StoreCall } from '../../core/store-guard.js';

export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials';

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
  /** May introspect any token (RFC 7662), not only its own. */
  introspect?: boolean;
  /** Signs this client's id_tokens with the newest key of this algorithm instead of RS256 (OIDC Registration `id_token_signed_response_alg`). */
  idTokenSigningAlg?: string;
  /** `suspended`: its client authentication fails and its tokens stop working until it is `active` again. Default active. */
  status?: 'active' | 'suspended';
  /** After a secret rotation: the previous secret's hash, still accepted until `previousSecretValidUntil`. */
  previousSecretHash?: string;
  /** Ms since the epoch. */
  previousSecretValidUntil?: number;
  /** Ms since the epoch: codes and tokens issued before it never work again (set when a suspended client is resumed). */
  tokensValidAfter?: number;
}

/** Which clients `listClients` answers: the admin API's paging (docs/operator.md#applications). */
export interface ClientPage {
  /** Only ids that sort after this one. */
  after?: string;
  /** At most this many. */
  limit?: number;
  /** Only clients with this status (a record without one is active). */
  status?: 'active' | 'suspended';
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

/** What every code and token the store answers carries. */
export interface GrantBound {
  ref: TokenRef;
  clientId: string;
  scope: string[];
  /** Absent for a client's own grant (client_credentials): no user took part. */
  user?: AuthorizedUser;
  /** When the user signed in (seconds since the epoch), for the id_token's auth_time; for a client's own grant, when it was issued. */
  authTime: number;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** Saved once per grant; its `scope` is the scope the user granted. */
export interface AuthorizationCodeRecord extends GrantBound {
  user: AuthorizedUser;
  redirectUri: string;
  nonce?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256';
}

/** An access token as readers see it: its own ref, scope and expiry, the rest from its grant. */
export type AccessTokenRecord = GrantBound & {
  /** Seconds since the epoch, for introspection's iat (RFC 7662 2.2); absent on a token stored without it. */
  issuedAt?: number;
};
/** A refresh token as readers see it: it always carries the grant's scope (RFC 6749 6). Only user grants have one. */
export type RefreshTokenRecord = GrantBound & { user: AuthorizedUser };

/** The one access token of a client's own grant (client_credentials, RFC 6749 4.4): no user, no code, no refresh token. */
export interface ClientTokenRecord {
  ref: TokenRef;
  clientId: string;
  scope: string[];
  /** Seconds since the epoch. */
  issuedAt: number;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface ConsumedMarker {
  /** A code: true once exchanged. A refresh token: true for an earlier generation's, already rotated out. */
  consumed: boolean;
  /** The previous generation's refresh token only: when the refresh that rotated it out was asked for (ms since the epoch). */
  rotatedAt?: number;
}

/** A token to store; the store knows its client, user and auth_time from the grant. */
export interface NewToken {
  ref: TokenRef;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** The tokens one issuance stores, all of one grant. */
export interface NewTokens {
  /** The access token's scope may be narrower than the grant's (a refresh may narrow it). */
  access: NewToken & { scope: string[]; issuedAt?: number };
  refresh?: NewToken;
}

/**
 * `rotated`: the tokens were stored. `reused`: the token presented is an earlier generation's and
 * not a retry of a pending rotation (nor within an opt-in grace): nothing changed, and the
 * caller revokes the grant. `invalid`: anything else (unknown, too old to be remembered, expired,
 * revoked, or a write that reached the store late; nothing changed).
 */
export type RotationOutcome = 'rotated' | 'reused' | 'invalid';

export interface OAuthStore {
  getClient(clientId: string): Promise<OAuthClientRecord | undefined>;
  /** Inserts or replaces a client. */
  saveClient(client: OAuthClientRecord): Promise<void>;
  /**
   * The stored clients in id order (code-unit order: ids are printable ASCII, so byte order), all
   * of them or one page. A store of the host's own may ignore `page` and answer every client: the
   * admin API filters and cuts what it gets.
   */
  listClients(page?: ClientPage): Promise<OAuthClientRecord[]>;
  /**
   * Removes a client with every grant of its users and every consent given to it; false when
   * there was none. (Redis leaves the client's own client_credentials grants to expire with
   * their access token: they fail at once, as the client is gone.) A store that needs many round
   * trips (a SCAN) tells `call` as each is answered (StoreCall.answered).
   */
  deleteClient(clientId: string, call?: StoreCall): Promise<boolean>;

  /** Starts a grant with its authorization code (one code per grant); replaces any record of that grant id. */
  saveCode(code: AuthorizationCodeRecord): Promise<void>;
  /**
   * The code until it expires, and once exchanged (`consumed: true`) for as long as any token of
   * its grant lives: a replay of the code, however late, must still end the grant (RFC 6749
   * 4.1.2). `undefined` when unknown, expired unexchanged, or revoked.
   */
  findCode(ref: TokenRef): Promise<(AuthorizationCodeRecord & ConsumedMarker) | undefined>;
  /** Marks the code exchanged. Atomic: of any number of concurrent callers exactly one gets `true`. */
  consumeCode(ref: TokenRef): Promise<boolean>;

  /**
   * Stores the first tokens of a grant whose code was just exchanged (generation 0 to 1).
   * Answers `false` and stores nothing when the grant is unknown or revoked, its code was not
   * exchanged, or it already has tokens.
   */
  issueTokens(tokens: NewTokens): Promise<boolean>;
  /**
   * One round trip: the whole record, or `undefined` when unknown, retired, expired or revoked.
   * Read it, never change it: a store may hand the same frozen object to every caller (the
   * memory store does).
   */
  findAccessToken(ref: TokenRef): Promise<AccessTokenRecord | undefined>;
  /**
   * Optional: the same lookup answered synchronously, for a store that lives in this process
   * (memory). The quota guard then validates a token without a promise.
   */
  findAccessTokenSync?(ref: TokenRef): AccessTokenRecord | undefined;
  /** A client's status at once (`undefined`: no such client): in-process stores offer it so the guard stays synchronous. */
  clientStatusSync?(clientId: string): 'active' | 'suspended' | undefined;
  /**
   * The grant's current refresh token (`consumed: false`) or an earlier generation's still
   * remembered (`consumed: true`; `rotatedAt` for the previous one) until it expires; `undefined`
   * for any other. Also tells a revocation request (RFC 7009) which grant and client a refresh
   * token belongs to.
   */
  findRefreshToken(ref: TokenRef): Promise<(RefreshTokenRecord & ConsumedMarker) | undefined>;
  /**
   * A refresh, as one atomic step, stamped with the store's clock. Every check comes before any
   * write, so a refused call or a call that fails changes nothing, and the same token can be
   * presented again.
   *
   * - `presented` is the grant's current unexpired refresh token: `next` becomes the current
   *   generation, pending; the presented token becomes the previous one, the previous one joins
   *   the earlier ones, the current access token becomes the previous one and the access token
   *   before it is retired. `rotated`.
   * - Otherwise, a request stamped at least `lateWriteMs` (default 1000, at least 1) before the
   *   current generation was installed is a write that reached the store late: `invalid`. The
   *   platform passes its store deadline (`oauth.storeTimeoutMs`): a call that still reaches the
   *   store after its caller was answered 503 was stamped at least that long before the client's
   *   retry, which made the current generation. A request stamped less than that before it is a
   *   concurrent one (it waited for the record behind another one presenting the same token, or
   *   its process's clock is a little behind) and goes on to the rules below, as if it came after.
   * - `presented` is the previous generation's and the current rotation is still pending (or,
   *   with `retryGraceMs` > 0, the store's clock is at most that far past `rotatedAt`): a retry.
   *   `next` replaces the current generation, pending again; the replaced refresh token joins the
   *   earlier ones and the replaced access token is retired; the previous token stays. `rotated`.
   * - `presented` is any earlier generation's still remembered: `reused`.
   *
   * So of any number of concurrent callers presenting the same token, the first rotates and the
   * others each replace the successor while it is pending (or, once it was confirmed, are
   * reuses), in whatever order their stamps came within `lateWriteMs`; all but the last successor
   * are then earlier generations.
   */
  rotateRefreshToken(presented: TokenRef, next: NewTokens & { refresh: NewToken }, retryGraceMs?: number, lateWriteMs?: number): Promise<RotationOutcome>;
  /**
   * The answer carrying `successor` was written to the client: when it is still the grant's
   * current refresh token, its rotation is no longer pending, and the token it rotated out is a
   * reuse from then on. Anything else changes nothing.
   */
  confirmRotation(successor: TokenRef): Promise<void>;
  /**
   * Starts a client's own grant holding just this access token, in one step; its lookups are the
   * same as any access token's. `revokeGrant` ends it; `revokeUserGrants` never sees it.
   */
  issueClientToken(token: ClientTokenRecord): Promise<void>;
  /** Ends one access token at once; the rest of its grant stays. */
  revokeAccessToken(ref: TokenRef): Promise<void>;
  /**
   * Ends a grant: its code and every token issued under it stop working at once. Answers whether
   * there was a live grant to end, when it can tell (a grant already ended is not logged again).
   */
  revokeGrant(grantId: string): Promise<boolean | void>;
  /**
   * Ends every grant of the user at the client (a pending code included) and forgets the consent.
   * Answers how many live grants it ended, when it can tell (the admin API reports it).
   */
  revokeUserGrants(sub: string, clientId: string): Promise<number | void>;

  /** Scopes the user already approved for this client, if any. */
  getConsent(sub: string, clientId: string): Promise<string[] | undefined>;
  /** Remembers approved scopes (replaces the previous set). */
  saveConsent(sub: string, clientId: string, scopes: string[]): Promise<void>;

  /**
   * Records that a one-time value (a consent transaction) was used, until `expiresAt`
   * (milliseconds since the epoch). Atomic: of any number of concurrent callers with the same id
   * exactly one gets `true`; every later call before `expiresAt` gets `false`.
   */
  useOnce(id: string, expiresAt: number): Promise<boolean>;
}
