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
 * A refresh token as readers see it: the grant's scope (RFC 6749 6). `rotatedAt` is given for
 * the previous generation's token only (`consumed`), undefined for the current one.
 */
export function refreshView(grant: AuthorizationCodeRecord, ref: TokenRef, expiresAt: number, rotatedAt: number | undefined): RefreshTokenRecord & ConsumedMarker {
  const view: RefreshTokenRecord & ConsumedMarker = { ...tokenView(grant, ref, grant.scope, expiresAt), user: grant.user, consumed: rotatedAt !== undefined };
  if (rotatedAt !== undefined) view.rotatedAt = rotatedAt;
  return view;
}

/**
 * What presenting the previous generation's refresh token at `now` amounts to, given when it was
 * rotated out and since when the current generation stands:
 * - `invalid` for a request older than the current generation (a retry or a write that reached
 *   the store late): it would replace tokens a later request handed out, so nothing changes;
 * - `retry` within the grace after the rotation (the grace never restarts);
 * - `reused` otherwise, and always with a grace of 0.
 * The Redis and PostgreSQL stores decide the same inside their one atomic step.
 */
export function previousTokenOutcome(slot: { rotatedAt: number; currentSince: number }, now: number, graceMs: number): 'retry' | 'reused' | 'invalid' {
  if (graceMs <= 0) return 'reused';
  if (now < slot.currentSince) return 'invalid';
  return now - slot.rotatedAt <= graceMs ? 'retry' : 'reused';
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
