/** The client_credentials grant (RFC 6749 4.4): a confidential client's token for itself, with no user. */
import type { OAuthContext } from './context.js';
import { OAuthProtocolError } from './errors.js';
import type { OAuthClientRecord } from './store/types.js';
import { newGrantId, newToken } from './token-format.js';

/** Scopes that speak of a user: an id_token (openid) or offline access to the user's data. */
const USER_SCOPES = new Set(['openid', 'offline_access']);

/** RFC 6749 3.3: the requested scope, or by default every scope the client may use without a user. */
function grantedScope(client: OAuthClientRecord, requested: string | undefined): string[] {
  const scope = (requested ?? '').split(' ').filter(Boolean);
  if (scope.length === 0) return client.scopes.filter((s) => !USER_SCOPES.has(s));
  const userScopes = scope.filter((s) => USER_SCOPES.has(s));
  if (userScopes.length > 0) throw new OAuthProtocolError('invalid_scope', `${userScopes.join(' ')} needs a user: not granted to client_credentials`);
  const extra = scope.filter((s) => !client.scopes.includes(s));
  if (extra.length > 0) throw new OAuthProtocolError('invalid_scope', `scope not allowed for this client: ${extra.join(' ')}`);
  return [...new Set(scope)];
}

/** RFC 6749 4.4.3: an access token and no refresh token. */
export async function issueClientCredentials(context: OAuthContext, client: OAuthClientRecord, requested: string | undefined) {
  const scope = grantedScope(client, requested);
  const token = newToken(newGrantId());
  const now = context.now();
  await context.store.issueClientToken({
    ref: token.ref,
    clientId: client.id,
    scope,
    issuedAt: Math.floor(now / 1000),
    expiresAt: now + context.lifetimes.accessToken * 1000,
  });
  context.emit({ type: 'token.issued', clientId: client.id, grantType: 'client_credentials' });
  return { access_token: token.value, token_type: 'Bearer', expires_in: context.lifetimes.accessToken, scope: scope.join(' ') };
}
