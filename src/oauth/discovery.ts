import { z } from 'zod';
import { jsonResponse, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import type { RouteDoc } from '../core/route-doc.js';
import { SUPPORTED_CLAIMS, SUPPORTED_SCOPES } from './claims.js';
import { issuerFor, type OAuthContext } from './context.js';
import { oauthErrorDoc } from './errors.js';

const unavailable = oauthErrorDoc('The authorization server has not started yet (`temporarily_unavailable`)', ['Retry-After']);

export const discoveryDoc: RouteDoc = {
  operationId: 'oauth_discovery',
  summary: 'OpenID Connect discovery',
  tag: 'oauth',
  responses: {
    200: {
      description: 'The provider metadata (OIDC Discovery 1.0 section 3)',
      schema: z.looseObject({
        issuer: z.string(),
        authorization_endpoint: z.string(),
        token_endpoint: z.string(),
        userinfo_endpoint: z.string(),
        jwks_uri: z.string(),
        response_types_supported: z.array(z.string()),
        grant_types_supported: z.array(z.string()),
        scopes_supported: z.array(z.string()),
        id_token_signing_alg_values_supported: z.array(z.string()),
      }),
      headers: ['Cache-Control'],
    },
    503: unavailable,
  },
};

export const jwksDoc: RouteDoc = {
  operationId: 'oauth_jwks',
  summary: 'The public keys that sign id_tokens',
  tag: 'oauth',
  responses: {
    200: { description: 'A JWK Set (RFC 7517)', schema: z.object({ keys: z.array(z.looseObject({ kty: z.string(), kid: z.string() })) }), headers: ['Cache-Control'] },
    503: unavailable,
  },
};

/** GET /oauth/.well-known/openid-configuration (OIDC Discovery 1.0 section 3). */
export async function handleDiscovery(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  const issuer = issuerFor(context, request);
  const algs = [...new Set(context.keyRing().all.map((k) => k.alg))];
  return jsonResponse(
    200,
    {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      revocation_endpoint: `${issuer}/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
      introspection_endpoint: `${issuer}/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic'],
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: algs,
      scopes_supported: [...SUPPORTED_SCOPES],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
      code_challenge_methods_supported: ['S256'],
      claims_supported: SUPPORTED_CLAIMS,
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
      authorization_response_iss_parameter_supported: true,
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    },
    // Without publicUrl every URL here comes from the request's Host: a shared cache must key on it.
    { 'cache-control': 'public, max-age=300', ...(context.publicUrl ? {} : { vary: 'Host' }) },
  );
}

/** GET /oauth/jwks: every published key, so tokens signed before a rotation still verify. */
export async function handleJwks(_request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  return jsonResponse(200, context.keyRing().jwks, { 'cache-control': 'public, max-age=300' });
}
