/** POST /oauth/introspect (RFC 7662): lets a resource server check the platform's opaque tokens. */
import { z } from 'zod';
import { jsonResponse, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import type { RouteDoc } from '../core/route-doc.js';
import { authenticateClient, invalidClient } from './client-auth.js';
import { issuerFor, type OAuthContext } from './context.js';
import { CLIENT_ENDPOINT_ERRORS, endpointErrorResponse, OAuthProtocolError } from './errors.js';
import { readForm } from './form.js';
import { tokenForm } from './revocation.js';
import { findToken } from './token-lookup.js';

const HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' };

export const introspectDoc: RouteDoc = {
  operationId: 'oauth_introspect',
  summary: 'What a token is worth, for a resource server (confidential clients only)',
  tag: 'oauth',
  security: ['clientBasic'],
  body: { contentType: 'application/x-www-form-urlencoded', schema: tokenForm.omit({ client_id: true }) },
  responses: {
    200: {
      description: '`{"active": false}` alone for a token the client may not see or that is not live',
      schema: z.object({
        active: z.boolean(),
        scope: z.string().optional(),
        client_id: z.string().optional(),
        sub: z.string().optional(),
        exp: z.number().int().optional(),
        iat: z.number().int().optional(),
        token_type: z.literal('Bearer').optional(),
        iss: z.string().optional(),
      }),
    },
    ...CLIENT_ENDPOINT_ERRORS,
  },
};

/**
 * RFC 7662 2.1-2.2: a client sees its own tokens; one registered with `introspect: true` any
 * token. Anything else, and any token unknown, expired or revoked, is `{"active":false}` alone,
 * so the answer never tells which.
 */
export async function handleIntrospect(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  try {
    const form = await readForm(request, context.bodyLimit);
    const client = await authenticateClient(request, form, context);
    // RFC 7662 2.1: the caller must be authorized; a public client proves nothing.
    if (!client.secretHash) throw invalidClient();
    if (!form.token) throw new OAuthProtocolError('invalid_request', 'token is required');
    const found = await findToken(context, form.token, form.token_type_hint);
    if (!found || !(client.introspect || found.record.clientId === client.id)) return jsonResponse(200, { active: false }, HEADERS);
    const { record } = found;
    const issuedAt = found.kind === 'access_token' ? found.record.issuedAt : undefined;
    return jsonResponse(
      200,
      {
        active: true,
        scope: record.scope.join(' '),
        client_id: record.clientId,
        ...(record.user ? { sub: record.user.sub } : {}),
        exp: Math.floor(record.expiresAt / 1000),
        ...(issuedAt === undefined ? {} : { iat: issuedAt }),
        ...(found.kind === 'access_token' ? { token_type: 'Bearer' } : {}),
        iss: issuerFor(context, request),
      },
      HEADERS,
    );
  } catch (error) {
    return endpointErrorResponse(error, context.logger, 'introspection');
  }
}
