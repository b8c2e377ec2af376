import { jsonResponse, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import { SUPPORTED_CLAIMS, SUPPORTED_SCOPES } from './claims.js';
import { issuerFor, type OAuthContext } from './context.js';

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
    { 'cache-control': 'public, max-age=300' },
  );
}

/** GET /oauth/jwks: every published key, so tokens signed before a rotation still verify. */
export async function handleJwks(_request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  return jsonResponse(200, context.keyRing().jwks, { 'cache-control': 'public, max-age=300' });
}
