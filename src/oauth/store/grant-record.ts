/** What the three stores share about a grant record: argument checks and the views they answer. */
import { configurationError } from '../../core/errors.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientTokenRecord,
  ConsumedMarker,
  GrantBound,
  NewTokens,
  RefreshTokenRecord,
  TokenRef,
} from './types.js';

export function checkGrantId(grantId: string): void {
  if (typeof grantId !== 'string' || grantId === '') throw configurationError('invalid_argument', 'grantId', 'must be a non-empty string');
}

/** The one grant every token of an issuance (and the refresh token presented for it) belongs to. */
export function grantIdOf(tokens: NewTokens, presented?: TokenRef): string {
  const grantId = tokens.access.ref.grantId;
  checkGrantId(grantId);
  for (const ref of [tokens.refresh?.ref, presented]) {
    if (ref && ref.grantId !== grantId) {
      throw configurationError('invalid_argument', 'tokens.refresh.ref.grantId', 'must be the grant of the access token');
    }
  }
  return grantId;
}

/** What a grant record keeps as its `record`: the code record, or for a client's own grant the fields of `clientGrantRecord`. */
export type StoredGrant = Omit<GrantBound, 'ref' | 'expiresAt'>;

/** A token as readers see it: its own ref, scope and expiry; client, user and auth_time from its grant. */
export function tokenView(grant: StoredGrant, ref: TokenRef, scope: string[], expiresAt: number): GrantBound {
  const view: GrantBound = { ref, clientId: grant.clientId, scope, authTime: grant.authTime, expiresAt };
  if (grant.user) view.user = grant.user;
  return view;
}

/**
 * A refresh token as readers see it: the grant's scope (RFC 6749 6). `earlier` for a token of an
 * earlier generation (`consumed`), with `rotatedAt` for the previous generation's.
 */
export function refreshView(
  grant: AuthorizationCodeRecord,
  ref: TokenRef,
  expiresAt: number,
  earlier?: { rotatedAt?: number },
): RefreshTokenRecord & ConsumedMarker {
  const view: RefreshTokenRecord & ConsumedMarker = { ...tokenView(grant, ref, grant.scope, expiresAt), user: grant.user, consumed: earlier !== undefined };
  if (earlier?.rotatedAt !== undefined) view.rotatedAt = earlier.rotatedAt;
  return view;
}

/**
 * How many refresh tokens before the current one a grant record remembers, the previous one
 * included (types.ts): presenting one of them is a reuse that ends the grant; an older one is
 * unknown to the store, and the token endpoint recognises it by its HMAC (newRefreshToken in
 * token-format.ts). Bounds the record at about 1 KB of hashes however often it is refreshed.
 */
export const EARLIER_REFRESH_TOKENS = 16;

/** An earlier generation's refresh token as a record keeps it: hash and expiry (ms). Redis and PostgreSQL store these pairs as JSON. */
export type EarlierToken = [hash: string, expiresAt: number];

/**
 * The earlier tokens once `retired` joins them (the previous token aside, so at most
 * `EARLIER_REFRESH_TOKENS - 1`), newest first, the expired ones dropped. The Redis and PostgreSQL
 * stores compute the same inside their one atomic step.
 */
export function withEarlier(older: readonly EarlierToken[], retired: EarlierToken | undefined, now: number): EarlierToken[] {
  return [...(retired ? [retired] : []), ...older].filter(([, expiresAt]) => expiresAt > now).slice(0, EARLIER_REFRESH_TOKENS - 1);
}

/**
 * How much earlier than the grant's current generation a refresh must have been asked for to be a
 * write that reached the store late, unless the platform says otherwise: `oauth.storeTimeoutMs`'s
 * default (docs/stores.md#deadlines-and-outages).
 */
export const LATE_WRITE_MS = 1000;

/**
 * The `lateWriteMs` a store goes by (rotateRefreshToken in types.ts): at least 1 ms, so that a
 * request asked for at the same instant as the current generation is never a late one.
 */
export function lateWriteMsOf(lateWriteMs = LATE_WRITE_MS): number {
  return lateWriteMs >= 1 ? lateWriteMs : 1;
}

/**
 * What presenting a refresh token that is not the grant's current one amounts to, for a refresh
 * asked for at `now`:
 * - `invalid` for a write that reached the store late: asked for at least `lateWriteMs` before
 *   the current generation was installed (`currentSince`). Its caller was answered 503 at its
 *   deadline and the client's retry made the current generation; it would undo what that retry
 *   handed out, so nothing changes. A request asked for less than that before is a concurrent
 *   one (it waited for the grant behind another presenting the same token, or its process's clock
 *   is a little behind), judged below as if it had come after;
 * - `retry` for the previous generation's token while the current rotation is pending (its
 *   answer not written yet), or within an opt-in grace after the rotation (never restarted);
 * - `reused` for any other earlier generation's;
 * - `invalid` for a token the record does not know.
 */
export function earlierTokenOutcome(
  found: 'previous' | 'older' | undefined,
  grant: { pending: boolean; rotatedAt: number; currentSince: number },
  now: number,
  graceMs: number,
  lateWriteMs: number,
): 'retry' | 'reused' | 'invalid' {
  if (found === undefined || grant.currentSince - now >= lateWriteMs) return 'invalid';
  if (found === 'previous' && (grant.pending || (graceMs > 0 && now - grant.rotatedAt <= graceMs))) return 'retry';
  return 'reused';
}

/** An access token as readers see it, with its issue time when it was stored with one. */
export function accessView(grant: StoredGrant, ref: TokenRef, stored: StoredAccessToken): AccessTokenRecord {
  const view: AccessTokenRecord = tokenView(grant, ref, stored.scope, stored.expiresAt);
  if (stored.issuedAt !== undefined) view.issuedAt = stored.issuedAt;
  return view;
}

/** The grant record of a client's own grant: no user; auth_time is its issue time. */
export function clientGrantRecord(token: ClientTokenRecord): StoredGrant {
  return { clientId: token.clientId, scope: token.scope, authTime: token.issuedAt };
}

/** How Redis and PostgreSQL keep an access token inside its grant record (JSON). */
export interface StoredAccessToken {
  scope: string[];
  expiresAt: number;
  issuedAt?: number;
}

/** The stored form of an issuance's access token. */
export function storedAccess(access: NewTokens['access']): StoredAccessToken {
  return { scope: [...access.scope], expiresAt: access.expiresAt, ...(access.issuedAt === undefined ? {} : { issuedAt: access.issuedAt }) };
}
