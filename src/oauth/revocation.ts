/** POST /oauth/revoke (RFC 7009). */
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import { authenticateClient } from './client-auth.js';
import type { OAuthContext } from './context.js';
import { endpointErrorResponse, OAuthProtocolError } from './errors.js';
import { readForm } from './form.js';
import { findToken } from './token-lookup.js';

/**
 * RFC 7009 2.1-2.2: a refresh token ends its whole grant, an access token only itself. The answer
 * is 200 whether or not anything was revoked, so it tells nothing about tokens of other clients
 * (which are left alone) or about unknown ones.
 */
export async function handleRevoke(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  try {
    const form = await readForm(request, context.bodyLimit);
    const client = await authenticateClient(request, form, context);
    if (!form.token) throw new OAuthProtocolError('invalid_request', 'token is required');
    const found = await findToken(context, form.token, form.token_type_hint);
    if (found && found.record.clientId === client.id) {
      if (found.kind === 'refresh_token') await context.store.revokeGrant(found.ref.grantId);
      else await context.store.revokeAccessToken(found.ref);
      context.logger.info({ clientId: client.id, tokenType: found.kind }, 'token revoked');
      const sub = found.record.user?.sub;
      context.emit({ type: found.kind === 'refresh_token' ? 'grant.revoked' : 'token.revoked', clientId: client.id, ...(sub === undefined ? {} : { sub }) });
    }
    return { status: 200, headers: { 'cache-control': 'no-store', pragma: 'no-cache' }, body: '' };
  } catch (error) {
    return endpointErrorResponse(error, context.logger, 'revocation');
  }
}
