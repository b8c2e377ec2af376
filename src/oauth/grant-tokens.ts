/**
 * What the authorization_code and refresh_token grants share once the grant is known: the
 * id_token of the new access token, and ending a grant whose code or refresh token leaked.
 */
import { claimsForScope } from './claims.js';
import type { OAuthContext } from './context.js';
import { signIdToken } from './id-token.js';
import type { AuthorizedUser, OAuthClientRecord } from './store/types.js';

export interface IdTokenFacts {
  issuer: string;
  client: OAuthClientRecord;
  user: AuthorizedUser;
  scope: readonly string[];
  authTime: number;
  nonce?: string;
  accessToken: string;
  /** When the tokens are issued (ms since the epoch, the platform's clock). */
  now: number;
}

/** OIDC Core 3.1.3.3 and 12.2: the id_token of an answer whose scope includes openid. */
export function idTokenFor(context: OAuthContext, facts: IdTokenFacts): Promise<string> {
  const ring = context.keyRing();
  // A stored client may name an algorithm no key signs any more: RS256 then (docs/oauth.md#signing-keys).
  const key = (facts.client.idTokenSigningAlg && ring.forAlg(facts.client.idTokenSigningAlg)) || ring.current;
  return signIdToken(key, {
    issuer: facts.issuer,
    clientId: facts.client.id,
    sub: facts.user.sub,
    claims: claimsForScope(facts.user.sub, facts.user.claims, facts.scope),
    authTime: facts.authTime,
    ...(facts.nonce === undefined ? {} : { nonce: facts.nonce }),
    accessToken: facts.accessToken,
    now: facts.now,
    lifetimeSeconds: context.lifetimes.idToken,
  });
}

/**
 * Logged when the store ended a live grant, or cannot tell: a grant that had already ended (a
 * client presenting a token after its own revocation, or anyone replaying one) logs nothing, so
 * the warning means what it says however often such a token comes back.
 */
export async function revokeGrant(context: OAuthContext, grantId: string, reason: string, clientId: string): Promise<void> {
  if ((await context.store.revokeGrant(grantId)) === false) return;
  context.logger.warn({ reason, clientId }, 'revoked a grant');
}

/** RFC 9700 4.14.2: reuse of a rotated-out refresh token means it leaked; end the grant. */
export async function endReusedGrant(context: OAuthContext, grantId: string, clientId: string, sub: string): Promise<void> {
  await revokeGrant(context, grantId, 'rotated refresh token reused', clientId);
  context.emit({ type: 'refresh_token.reused', clientId, sub });
}
