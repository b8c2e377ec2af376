import OAuth2Server from '@node-oauth/oauth2-server';
import { readBasicAuth } from '../core/basic-auth.js';
import { PlatformError } from '../core/errors.js';
import { jsonResponse, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import { verifyClientSecret } from './client-secret.js';
import { issuerFor, type OAuthContext } from './context.js';
import { tokenModel, withModel } from './engine.js';
import { fromEngineError, OAuthProtocolError, oauthErrorResponse } from './errors.js';
import { readForm } from './form.js';
import type { OAuthClientRecord } from './store/types.js';

const CHALLENGE = { 'www-authenticate': 'Basic realm="oauth", charset="UTF-8"' };
/** Verified against when the client does not exist, so the time taken does not tell (RFC 6749 10.2 spirit). */
const DECOY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

function invalidClient(): OAuthProtocolError {
  return new OAuthProtocolError('invalid_client', 'client authentication failed', 401, CHALLENGE);
}

/** RFC 6749 2.3.1: the client id and secret are form-urlencoded before Basic encoding. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw invalidClient();
  }
}

interface PresentedCredentials {
  clientId: string;
  secret?: string;
}

function presentedCredentials(request: PlatformRequest, form: Record<string, string>): PresentedCredentials {
  const auth = readBasicAuth(request);
  if (auth.kind === 'malformed') throw invalidClient();
  if (auth.kind === 'basic') {
    const clientId = formDecode(auth.user);
    // RFC 6749 2.3: one authentication method per request.
    if (form.client_secret !== undefined) throw new OAuthProtocolError('invalid_request', 'send client credentials either with HTTP Basic or in the body, not both');
    if (form.client_id !== undefined && form.client_id !== clientId) throw new OAuthProtocolError('invalid_request', 'client_id in the body differs from the authenticated client');
    return { clientId, secret: formDecode(auth.password) };
  }
  if (form.client_secret !== undefined) throw new OAuthProtocolError('invalid_client', 'authenticate the client with HTTP Basic (client_secret_basic)', 401, CHALLENGE);
  if (!form.client_id) throw invalidClient();
  return { clientId: form.client_id };
}

/** The presented secret is right; an unknown client costs the same scrypt work as a wrong secret. */
async function verifyPresented(presented: PresentedCredentials, context: OAuthContext): Promise<OAuthClientRecord | undefined> {
  const client = await context.store.getClient(presented.clientId);
  if (!client) {
    await verifyClientSecret(presented.secret ?? '', DECOY_HASH);
    return undefined;
  }
  // A public client has no secret; it proves itself with PKCE instead.
  if (!client.secretHash) return presented.secret === undefined ? client : undefined;
  return presented.secret !== undefined && (await context.verifySecret(presented.secret, client.secretHash)) ? client : undefined;
}

/**
 * RFC 6749 2.3.1 and 10.10: every attempt reserves a failure on the caller's IP and on the client
 * id before the secret is checked, so no burst of guesses runs more checks than the limit. A
 * success gives back only its own reservation: failures made by others stay counted.
 */
async function authenticateClient(request: PlatformRequest, form: Record<string, string>, context: OAuthContext): Promise<OAuthClientRecord> {
  const presented = presentedCredentials(request, form);
  const attempt = await context.clientAuthThrottle.attempt([`ip:${context.clientIp(request)}`, `client:${presented.clientId}`]);
  if (attempt.retryAfter > 0) {
    throw new OAuthProtocolError('invalid_client', `too many failed client authentications; retry in ${attempt.retryAfter} seconds`, 429, {
      'retry-after': String(attempt.retryAfter),
    });
  }
  let client: OAuthClientRecord | undefined;
  try {
    client = await verifyPresented(presented, context);
  } catch (error) {
    // No verdict (the store failed): not a failure of the caller. Not awaited: the store is
    // likely down, this answer must not wait a second deadline, and a failed give-back is retried.
    attempt.release().catch(() => undefined);
    throw error;
  }
  if (!client) {
    // The reservation stays: it is this failure.
    context.logger.info({ clientId: presented.clientId }, 'client authentication failed');
    throw invalidClient();
  }
  await attempt.release();
  return client;
}

const GRANT_TYPES = new Set<string>(['authorization_code', 'refresh_token']);

/** RFC 6749 5.2, checked here because the engine asks for client credentials again for grants it does not expect. */
function checkGrantType(grantType: string | undefined, client: OAuthClientRecord): void {
  if (!grantType) throw new OAuthProtocolError('invalid_request', 'grant_type is required');
  if (!GRANT_TYPES.has(grantType)) throw new OAuthProtocolError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  if (!(client.grants as string[]).includes(grantType)) throw new OAuthProtocolError('unauthorized_client', `this client may not use the ${grantType} grant`);
}

/** POST /oauth/token (RFC 6749 3.2, 4.1.3, 6). */
export async function handleToken(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  try {
    const form = await readForm(request, context.bodyLimit);
    const client = await authenticateClient(request, form, context);
    checkGrantType(form.grant_type, client);
    const { client_secret: _secret, ...body } = form;
    const engineRequest = new OAuth2Server.Request({
      method: 'POST',
      // The engine re-checks the media type with type-is, which also wants to see a body length.
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1' },
      query: {},
      body: { ...body, client_id: client.id },
    });
    const engineResponse = new OAuth2Server.Response();
    await context.engine.token(
      engineRequest,
      engineResponse,
      withModel(tokenModel(context, client, issuerFor(context, request), body), {
        // Client authentication was done above (decoded Basic, throttled, constant time).
        requireClientAuthentication: { authorization_code: false, refresh_token: false },
        allowExtendedTokenAttributes: true,
        alwaysIssueNewRefreshToken: true,
        accessTokenLifetime: context.lifetimes.accessToken,
        refreshTokenLifetime: context.lifetimes.refreshToken,
      }),
    );
    return jsonResponse(200, engineResponse.body, { 'cache-control': 'no-store', pragma: 'no-cache' });
  } catch (error) {
    // Body errors (413, 415) and store outages (503) are formatted by the route, in the same
    // RFC 6749 shape. The engine wraps what the model throws in a server_error: unwrap it.
    const inner: unknown = error instanceof OAuth2Server.OAuthError ? (error as { inner?: unknown }).inner : undefined;
    if (inner instanceof PlatformError) throw inner;
    if (error instanceof PlatformError) throw error;
    if (!(error instanceof OAuthProtocolError) && !(error instanceof OAuth2Server.OAuthError)) {
      context.logger.error({ err: error }, 'token endpoint failed');
    }
    return oauthErrorResponse(fromEngineError(error));
  }
}
