/** POST /oauth/revoke (RFC 7009). */
import { z } from 'zod';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { RouteDoc } from '../core/route-doc.js';
import { authenticateClient } from './client-auth.js';
import type { OAuthContext } from './context.js';
import { CLIENT_ENDPOINT_ERRORS, endpointErrorResponse, OAuthProtocolError } from './errors.js';
import { readForm } from './form.js';
import { findToken } from './token-lookup.js';

/** The token form of revocation and introspection (RFC 7009 2.1, RFC 7662 2.1). */
export const tokenForm = z.object({
  token: z.string(),
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  client_id: z.string().optional().meta({ description: 'Public clients only' }),
});

export const revokeDoc: RouteDoc = {
  operationId: 'oauth_revoke',
  summary: 'End a token: an access token alone, a refresh token with its whole grant',
  tag: 'oauth',
  security: ['clientBasic'],
  credentialsOptional: true,
  body: { contentType: 'application/x-www-form-urlencoded', schema: tokenForm },
  responses: { 200: { description: 'Done, whether or not there was anything to revoke' }, ...CLIENT_ENDPOINT_ERRORS },
};

/**
 * RFC 7009 2.1-2.2: a refresh token ends its whole grant, an access token only itself. A
 * rotated-out refresh token the grant still remembers ends it too: it could otherwise repeat a
 * pending rotation, and a refresh token whose revocation was answered 200 must never issue
 * tokens again (docs/oauth.md#revocation). The answer
 * is 200 whether or not anything was revoked, so it tells nothing about tokens of other clients
 * (which are left alone) or about unknown ones.
 */
export async function handleRevoke(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  try {
    const form = await readForm(request, context.bodyLimit);
    const client = await authenticateClient(request, form, context);
    if (!form.token) throw new OAuthProtocolError('invalid_request', 'token is required');
    const found = await findToken(context, form.token, form.token_type_hint, { rotated: true });
    if (found && found.record.clientId === client.id) {
      if (found.kind === 'refresh_token') await context.store.revokeGrant(found.ref.grantId);
      else await context.store.revokeAccessToken(found.ref);
      context.logger.info({ clientId: client.id, kind: found.kind }, 'token revoked');
      const sub = found.record.user?.sub;
      context.emit({ type: found.kind === 'refresh_token' ? 'grant.revoked' : 'token.revoked', clientId: client.id, ...(sub === undefined ? {} : { sub }) });
    }
    return { status: 200, headers: { 'cache-control': 'no-store', pragma: 'no-cache' }, body: '' };
  } catch (error) {
    return endpointErrorResponse(error, context.logger, 'revocation');
  }
}
