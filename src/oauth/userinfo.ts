import { z } from 'zod';
import { bearerToken } from '../core/bearer.js';
import { jsonResponse, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import type { RouteDoc } from '../core/route-doc.js';
import { claimsForScope } from './claims.js';
import type { OAuthContext } from './context.js';
import { oauthErrorDoc, safeDescription } from './errors.js';
import type { AccessTokenRecord } from './store/types.js';
import { parseToken } from './token-format.js';

/** One store round trip: the live record of a presented access token, or undefined. */
export async function findAccessToken(context: Pick<OAuthContext, 'store'>, token: string | undefined): Promise<AccessTokenRecord | undefined> {
  const ref = parseToken(token);
  return ref ? context.store.findAccessToken(ref) : undefined;
}

function bearerError(status: number, error: string | undefined, description: string, extra = ''): PlatformResponse {
  const params = error ? `, error="${error}", error_description="${safeDescription(description)}"${extra}` : '';
  return jsonResponse(
    status,
    { error: error ?? 'invalid_request', error_description: safeDescription(description) },
    { 'www-authenticate': `Bearer realm="oauth"${params}`, 'cache-control': 'no-store' },
  );
}

/** The same endpoint answers GET and POST (OIDC Core 5.3). */
export function userinfoDoc(method: 'GET' | 'POST'): RouteDoc {
  return {
    operationId: method === 'GET' ? 'oauth_userinfo' : 'oauth_userinfo_post',
    summary: "The signed-in user's claims that the granted scopes release",
    tag: 'oauth',
    security: ['oauth2'],
    responses: {
      200: { description: '`sub` and the released claims', schema: z.looseObject({ sub: z.string() }) },
      401: oauthErrorDoc('No access token, or one that is invalid, expired or revoked (`invalid_token`)', ['WWW-Authenticate']),
      403: oauthErrorDoc('A token without `openid`, or one issued to a client for itself (`insufficient_scope`)', ['WWW-Authenticate']),
      503: oauthErrorDoc('The OAuth store is unavailable (`temporarily_unavailable`)', ['Retry-After']),
    },
  };
}

/** GET and POST /oauth/userinfo (OIDC Core 5.3). */
export async function handleUserinfo(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  const token = bearerToken(request);
  // RFC 6750 3.1: a request without Bearer credentials gets the challenge but no error code.
  if (token === undefined) return bearerError(401, undefined, 'send the access token as Authorization: Bearer <token>');
  const record = await findAccessToken(context, token);
  if (!record) return bearerError(401, 'invalid_token', 'the access token is invalid, expired or revoked');
  // A client's own token (client_credentials) speaks for no user.
  if (!record.user) return bearerError(403, 'insufficient_scope', 'userinfo needs a token issued for a user', ', scope="openid"');
  if (!record.scope.includes('openid')) {
    return bearerError(403, 'insufficient_scope', 'userinfo needs a token with the openid scope', ', scope="openid"');
  }
  return jsonResponse(200, claimsForScope(record.user.sub, record.user.claims, record.scope), { 'cache-control': 'no-store' });
}
