import OAuth2Server from '@node-oauth/oauth2-server';
import { z } from 'zod';
import type { RouteDoc } from '../core/route-doc.js';
import { jsonResponse, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import { authenticateClient, invalidClient } from './client-auth.js';
import { issueClientCredentials } from './client-credentials.js';
import { issuerFor, type OAuthContext } from './context.js';
import { tokenModel, withModel } from './engine.js';
import { CLIENT_ENDPOINT_ERRORS, endpointErrorResponse, OAuthProtocolError } from './errors.js';
import { readForm } from './form.js';
import { refreshTokens } from './refresh-grant.js';
import type { OAuthClientRecord, TokenRef } from './store/types.js';

/** RFC 6749 5.1: token answers are never cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

const GRANT_TYPES = new Set<string>(['authorization_code', 'refresh_token', 'client_credentials']);

/** RFC 6749 5.2, checked here because the engine asks for client credentials again for grants it does not expect. */
function checkGrantType(grantType: string | undefined, client: OAuthClientRecord): void {
  if (!grantType) throw new OAuthProtocolError('invalid_request', 'grant_type is required');
  if (!GRANT_TYPES.has(grantType)) throw new OAuthProtocolError('unsupported_grant_type', 'grant_type must be authorization_code, refresh_token or client_credentials');
  // RFC 6749 4.4: only a confidential client may act on its own behalf.
  if (grantType === 'client_credentials' && !client.secretHash) throw invalidClient();
  if (!(client.grants as string[]).includes(grantType)) throw new OAuthProtocolError('unauthorized_client', `this client may not use the ${grantType} grant`);
}

// The engine and checkGrantType check the form in RFC 6749's order and answer its error codes;
// this schema describes the three grants for the API document.
const clientId = z.string().optional().meta({ description: 'Public clients only; a confidential client authenticates with HTTP Basic' });
const tokenForm = z.discriminatedUnion('grant_type', [
  z.object({ grant_type: z.literal('authorization_code'), code: z.string(), redirect_uri: z.url(), code_verifier: z.string().optional(), client_id: clientId }),
  z.object({ grant_type: z.literal('refresh_token'), refresh_token: z.string(), scope: z.string().optional(), client_id: clientId }),
  z.object({ grant_type: z.literal('client_credentials'), scope: z.string().optional() }),
]);

const tokenAnswer = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
  id_token: z.string().optional().meta({ description: 'When `openid` was granted' }),
  refresh_token: z.string().optional().meta({ description: 'When `offline_access` was granted' }),
});

export const tokenDoc: RouteDoc = {
  operationId: 'oauth_token',
  summary: 'Tokens for an authorization code, a refresh token or the client itself',
  tag: 'oauth',
  security: ['clientBasic'],
  credentialsOptional: true,
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: tokenForm,
    example: { grant_type: 'authorization_code', code: 'the-code', redirect_uri: 'https://shop.example/callback', code_verifier: 'the-verifier' },
  },
  responses: { 200: { description: 'The tokens', schema: tokenAnswer, headers: ['Cache-Control'] }, ...CLIENT_ENDPOINT_ERRORS },
};

/** POST /oauth/token (RFC 6749 3.2, 4.1.3, 6). */
export async function handleToken(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  try {
    const form = await readForm(request, context.bodyLimit);
    const client = await authenticateClient(request, form, context);
    checkGrantType(form.grant_type, client);
    if (form.grant_type === 'client_credentials') {
      return jsonResponse(200, await issueClientCredentials(context, client, form.scope), NO_STORE);
    }
    if (form.grant_type === 'refresh_token') {
      const { body, successor } = await refreshTokens(context, client, issuerFor(context, request), form);
      const response = jsonResponse(200, body, NO_STORE);
      response.onSent = () => confirmRotation(context, successor);
      return response;
    }
    const { client_secret: _secret, ...body } = form;
    const engineRequest = new OAuth2Server.Request({
      method: 'POST',
      // The engine re-checks the media type with type-is, which also wants to see a body length.
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1' },
      query: {},
      body: { ...body, client_id: client.id },
    });
    const engineResponse = new OAuth2Server.Response();
    const model = tokenModel(context, client, issuerFor(context, request), body);
    await context.engine.token(
      engineRequest,
      engineResponse,
      withModel(model, {
        // Client authentication was done above (decoded Basic, throttled, constant time).
        requireClientAuthentication: { authorization_code: false },
        allowExtendedTokenAttributes: true,
        accessTokenLifetime: context.lifetimes.accessToken,
        refreshTokenLifetime: context.lifetimes.refreshToken,
      }),
    );
    return jsonResponse(200, engineResponse.body, NO_STORE);
  } catch (error) {
    return endpointErrorResponse(error, context.logger, 'token');
  }
}

/**
 * Once a refresh's answer was written, its rotation is no longer pending: the token it rotated
 * out becomes a reuse (docs/oauth.md#tokens). Off the request path; while the store cannot be
 * told, the rotation stays pending and the confirmation is tried again (rotation-confirmations.ts).
 */
function confirmRotation(context: OAuthContext, successor: TokenRef): void {
  context.confirmRotation(successor).catch((error: unknown) => {
    // Requests meeting the same store report its outage; one line per rotation would flood the log.
    context.logger.debug({ err: error }, 'could not confirm a refresh token rotation');
  });
}
