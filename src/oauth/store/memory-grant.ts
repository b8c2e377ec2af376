/**
 * One grant entry of the memory OAuth store (memory.ts) and the steps that change its tokens:
 * the shape is bounded (types.ts), so refreshing a grant never grows it.
 */
import { storedAccess, withEarlier, type EarlierToken, type StoredGrant } from './grant-record.js';
import type { AccessTokenRecord, NewToken, NewTokens } from './types.js';

export interface AccessSlot {
  hash: string;
  scope: readonly string[];
  expiresAt: number;
  issuedAt?: number;
  /**
   * The token's record, built on first read and deep-frozen: every guarded call reads it, and
   * building it each time was the largest cost of the memory guard.
   */
  frozen?: AccessTokenRecord;
}

export interface RefreshSlot {
  hash: string;
  expiresAt: number;
  /** When it was installed. */
  since: number;
}

export interface Grant {
  /**
   * The code record as saved, kept as JSON text as Redis and PostgreSQL keep it: a record that
   * survives here survives there too, and nothing a caller does to its object reaches the store.
   */
  json: string;
  /** `json` parsed once and deep-frozen, shared by the access-token records. */
  parsed?: StoredGrant;
  codeHash: string;
  codeExpiresAt: number;
  consumed: boolean;
  generation: number;
  refresh?: RefreshSlot;
  /** The rotation that installed `refresh` has not been confirmed (its answer not written yet). */
  pending: boolean;
  /** With the time the refresh that rotated it out was asked for. */
  previousRefresh?: RefreshSlot & { rotatedAt: number };
  /** The earlier generations before the previous one, newest first (withEarlier). */
  older: EarlierToken[];
  access?: AccessSlot;
  previousAccess?: AccessSlot;
  /** When the last part of the grant expires. */
  expiresAt: number;
  /** consentKey(sub, clientId), for revokeUserGrants; none for a client's own grant. */
  pair?: string;
}

export function slotMatches(slot: RefreshSlot | AccessSlot | undefined, hash: string, at: number): boolean {
  return slot !== undefined && slot.hash === hash && slot.expiresAt > at;
}

/**
 * Installs the tokens of an issuance as the grant's current generation: the first tokens, a
 * rotation from the current refresh token, or a retry from the previous one (types.ts).
 */
export function installTokens(grant: Grant, { access, refresh }: NewTokens, step: 'first' | 'rotate' | 'retry', at: number): void {
  grant.generation += 1;
  // A retry replaces the successor nobody received: its access token goes, the previous stays.
  if (step !== 'retry') grant.previousAccess = grant.access;
  grant.access = { hash: access.ref.hash, ...storedAccess(access) };
  if (refresh) {
    const replaced = step === 'rotate' ? grant.previousRefresh : grant.refresh;
    grant.older = withEarlier(grant.older, replaced && step !== 'first' ? [replaced.hash, replaced.expiresAt] : undefined, at);
    if (step === 'rotate') grant.previousRefresh = grant.refresh && { ...grant.refresh, rotatedAt: at };
    grant.refresh = slotOf(refresh, at);
    grant.pending = step !== 'first';
  }
  grant.expiresAt = Math.max(grant.expiresAt, access.expiresAt, refresh?.expiresAt ?? 0);
}

/** Which earlier generation of the grant a presented hash is, if any still unexpired. */
export function earlierGeneration(grant: Grant, hash: string, at: number): 'previous' | 'older' | undefined {
  if (slotMatches(grant.previousRefresh, hash, at)) return 'previous';
  return grant.older.some(([h, expiresAt]) => h === hash && expiresAt > at) ? 'older' : undefined;
}

function slotOf(token: NewToken, since: number): RefreshSlot {
  return { hash: token.ref.hash, expiresAt: token.expiresAt, since };
}
