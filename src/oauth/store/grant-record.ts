/** What the three stores share about a grant record: argument checks and the views they answer. */
import { configurationError } from '../../core/errors.js';
import type { AuthorizationCodeRecord, GrantBound, NewTokens, TokenRef } from './types.js';

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

/** A token as readers see it: its own ref, scope and expiry; client, user and auth_time from its grant. */
export function tokenView(grant: AuthorizationCodeRecord, ref: TokenRef, scope: string[], expiresAt: number): GrantBound {
  return { ref, clientId: grant.clientId, scope, user: grant.user, authTime: grant.authTime, expiresAt };
}

/** How Redis and PostgreSQL keep an access token inside its grant record (JSON). */
export interface StoredAccessToken {
  scope: string[];
  expiresAt: number;
}
