/**
 * The refresh_token grant (RFC 6749 6) with rotation (RFC 9700 4.14.2): find the presented
 * token, check the requested scope, sign the new id_token, then rotate in one store step
 * (docs/oauth.md#tokens). Two store round trips before the answer; the rotation is confirmed
 * after it was written (token-endpoint.ts).
 */
import type { OAuthContext } from './context.js';
import { OAuthProtocolError } from './errors.js';
import { endReusedGrant, idTokenFor, revokeGrant } from './grant-tokens.js';
import type { OAuthClientRecord, TokenRef } from './store/types.js';
import { issuedRefreshToken, newRefreshToken, newToken, parseToken } from './token-format.js';

/** RFC 6749 A.4: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export interface RefreshAnswer {
  body: {
    access_token: string;
    token_type: 'Bearer';
    expires_in: number;
    refresh_token: string;
    scope: string;
    id_token?: string;
  };
  /** The refresh token handed out, for confirmRotation once the answer is written. */
  successor: TokenRef;
}

const invalidGrant = (description: string) => new OAuthProtocolError('invalid_grant', description);

/**
 * RFC 6749 6: the scope of the new access token, the granted one unless a narrower one was asked
 * for. A wider one is refused before anything changes, so the refresh token survives the mistake.
 */
function scopeOf(requested: string | undefined, granted: readonly string[]): string[] {
  if (requested === undefined) return [...granted];
  const scope = requested.trim().split(/\s+/);
  if (!scope.every((s) => SCOPE_TOKEN.test(s))) throw new OAuthProtocolError('invalid_scope', 'scope must be scope names separated by spaces');
  const extra = scope.filter((s) => !granted.includes(s));
  if (extra.length > 0) throw new OAuthProtocolError('invalid_scope', `scope was not granted: ${extra.join(' ')}`);
  return scope;
}

export async function refreshTokens(
  context: OAuthContext,
  client: OAuthClientRecord,
  issuer: string,
  form: Record<string, string>,
): Promise<RefreshAnswer> {
  if (!form.refresh_token) throw new OAuthProtocolError('invalid_request', 'refresh_token is required');
  const presented = parseToken(form.refresh_token);
  const record = presented && (await context.store.findRefreshToken(presented));
  if (!presented || !record) {
    // A token issued for this grant to this client that its record no longer knows: an earlier
    // generation than it remembers (RFC 9700 4.14.2), or a grant already ended, which this ends again.
    if (presented && issuedRefreshToken(form.refresh_token, client.id, context.keyRing().all.map((key) => key.secret))) {
      await revokeGrant(context, presented.grantId, 'a refresh token older than its grant remembers was presented', client.id);
    }
    throw invalidGrant('the refresh token is invalid');
  }
  if (record.clientId !== client.id) {
    // RFC 9700 4.14.2: a rotated-out token in another client's hands leaked; end the grant.
    if (record.consumed) await endReusedGrant(context, presented.grantId, record.clientId, record.user.sub);
    throw invalidGrant('the refresh token was issued to another client');
  }
  const now = context.now();
  if (record.expiresAt <= now) throw invalidGrant('the refresh token has expired');
  // OIDC Core 11: a refresh token lives on offline_access; once the client may no longer have it
  // (its record's scopes cut it from the token), the grant's refresh tokens stop.
  if (!record.scope.includes('offline_access')) throw invalidGrant('the refresh token is no longer valid: the client may no longer keep offline access');
  // An earlier generation's token goes on to the store's rotation step, which alone knows
  // whether it repeats a rotation still pending or is a reuse (docs/oauth.md#tokens).
  let scope: string[];
  try {
    scope = scopeOf(form.scope, record.scope);
  } catch (error) {
    // A client repeating a rotation whose answer it lost repeats its request, scope and all: an
    // earlier generation's token sent with a scope it could never have had is a reuse (RFC 9700 4.14.2).
    if (!record.consumed) throw error;
    await endReusedGrant(context, presented.grantId, client.id, record.user.sub);
    throw invalidGrant('the refresh token is no longer valid');
  }

  const access = newToken(presented.grantId);
  const refresh = newRefreshToken(presented.grantId, client.id, context.secret());
  // Signed before the tokens are stored, so nothing can fail once they are.
  const idToken = scope.includes('openid')
    ? await idTokenFor(context, { issuer, client, user: record.user, scope, authTime: record.authTime, accessToken: access.value, now })
    : undefined;
  const outcome = await context.store.rotateRefreshToken(
    presented,
    {
      access: { ref: access.ref, scope, expiresAt: now + context.lifetimes.accessToken * 1000, issuedAt: Math.floor(now / 1000) },
      // The new refresh token keeps the granted scope, whatever the access token was narrowed to (RFC 6749 6).
      refresh: { ref: refresh.ref, expiresAt: now + context.lifetimes.refreshToken * 1000 },
    },
    context.refreshRetryGraceMs,
    context.lateWriteMs,
  );
  if (outcome === 'reused') await endReusedGrant(context, presented.grantId, client.id, record.user.sub);
  if (outcome !== 'rotated') throw invalidGrant('the refresh token is no longer valid');
  context.emit({ type: 'token.refreshed', clientId: client.id, sub: record.user.sub, grantType: 'refresh_token' });
  const body: RefreshAnswer['body'] = {
    access_token: access.value,
    token_type: 'Bearer',
    expires_in: context.lifetimes.accessToken,
    refresh_token: refresh.value,
    scope: scope.join(' '),
  };
  if (idToken !== undefined) body.id_token = idToken;
  return { body, successor: refresh.ref };
}
