import OAuth2Server from '@node-oauth/oauth2-server';
import { z } from 'zod';
import { PlatformError } from '../core/errors.js';
import { header, jsonResponse, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import type { ResponseHeaderName, RouteResponseDoc } from '../core/route-doc.js';
import { errorPage } from './pages.js';

/**
 * The `error` codes the authorization server answers with (RFC 6749 4.1.2.1 and 5.2, OpenID
 * Connect Core 3.1.2.6, RFC 6750 3.1): in JSON bodies, error redirects and the error page.
 */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'invalid_scope',
  'access_denied',
  'login_required',
  'consent_required',
  'request_not_supported',
  'request_uri_not_supported',
  'invalid_token',
  'insufficient_scope',
  'server_error',
  'temporarily_unavailable',
] as const;

export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

/** An RFC 6749 5.2 error body, for the API document. */
export function oauthErrorDoc(description: string, headers?: readonly ResponseHeaderName[]): RouteResponseDoc {
  return { description, schema: z.object({ error: z.enum(OAUTH_ERROR_CODES), error_description: z.string() }), ...(headers ? { headers } : {}) };
}

/** The errors of every endpoint that authenticates a client (token, revocation, introspection). */
export const CLIENT_ENDPOINT_ERRORS: Readonly<Record<number, RouteResponseDoc>> = {
  400: oauthErrorDoc('A parameter is missing, repeated or malformed (`invalid_request`), or the grant is refused'),
  401: oauthErrorDoc('Client authentication failed (`invalid_client`)', ['WWW-Authenticate']),
  429: oauthErrorDoc('Too many failed client authentications (`invalid_client`)', ['Retry-After']),
  503: oauthErrorDoc('The OAuth store is unavailable (`temporarily_unavailable`)', ['Retry-After']),
};
import type { Logger } from '../core/logger.js';

/** RFC 6749 5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E. */
export function safeDescription(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, "'").slice(0, 300);
}

/** An RFC 6749 error: `error` (also `code`, as in the rest of the family) and its description. */
export class OAuthProtocolError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = new.target.name;
  }

  get code(): OAuthErrorCode {
    return this.error;
  }
}

/** 503 while the OAuth server could not start (its store is down); `cause` says why. */
export class OAuthUnavailableError extends PlatformError {
  constructor(cause: unknown) {
    super('oauth_unavailable', 'The authorization server is not available yet; try again in a few seconds', { headers: { 'retry-after': '5' }, cause });
  }
}

function isOAuthErrorCode(name: string): name is OAuthErrorCode {
  return (OAUTH_ERROR_CODES as readonly string[]).includes(name);
}

/** The engine's messages are written for developers; ours are the ones a client sees. */
export function fromEngineError(error: unknown): OAuthProtocolError {
  if (error instanceof OAuthProtocolError) return error;
  if (error instanceof OAuth2Server.OAuthError && error.code < 500 && isOAuthErrorCode(error.name)) {
    return new OAuthProtocolError(error.name, error.message.replace(/`/g, ''), error.code);
  }
  return new OAuthProtocolError('server_error', 'The authorization server failed; try again later', 500);
}

/** RFC 6749 5.2 JSON error, never cached. */
export function oauthErrorResponse(error: OAuthProtocolError): PlatformResponse {
  return jsonResponse(
    error.status,
    { error: error.error, error_description: safeDescription(error.description) },
    { 'cache-control': 'no-store', pragma: 'no-cache', ...error.headers },
  );
}

/** The RFC 6749 code for an error of the shared core (body too large, a host callback that failed, ...). */
export function oauthErrorCode(error: PlatformError): OAuthErrorCode {
  if (error.status === 401) return 'invalid_client';
  if (error.status === 503) return 'temporarily_unavailable';
  return error.status >= 500 ? 'server_error' : 'invalid_request';
}

/** Errors of the shared core in RFC 6749 form. */
export function formatPlatformErrorAsOAuth(error: PlatformError): PlatformResponse {
  return oauthErrorResponse(new OAuthProtocolError(oauthErrorCode(error), error.message, error.status, error.headers));
}

/** A caller that accepts JSON and not HTML (a script, not a browser). */
function wantsJson(request: PlatformRequest): boolean {
  const accept = header(request, 'accept') ?? '';
  return /\bapplication\/(?:[\w.+-]*\+)?json\b/i.test(accept) && !/\btext\/html\b/i.test(accept);
}

/**
 * An error of an endpoint the user's browser visits (authorize, consent): the OAuth error page,
 * or RFC 6749 JSON for a caller that asks for JSON only.
 */
export function browserErrorResponse(error: PlatformError, request?: PlatformRequest): PlatformResponse {
  if (request && wantsJson(request)) return formatPlatformErrorAsOAuth(error);
  return errorPage(error.status, oauthErrorCode(error), error.message, error.headers);
}

/**
 * How the token, revocation and introspection endpoints answer a failure: body errors (413, 415)
 * go on to the route, which formats them the same way; anything unexpected is logged.
 */
export function endpointErrorResponse(error: unknown, logger: Logger, endpoint: string): PlatformResponse {
  if (error instanceof PlatformError) throw error;
  // Store outages (503) too; the engine wraps what the model throws in a server_error: unwrap it.
  const inner: unknown = error instanceof OAuth2Server.OAuthError ? (error as { inner?: unknown }).inner : undefined;
  if (inner instanceof PlatformError) throw inner;
  if (!(error instanceof OAuthProtocolError) && !(error instanceof OAuth2Server.OAuthError)) {
    logger.error({ err: error }, `${endpoint} endpoint failed`);
  }
  return oauthErrorResponse(fromEngineError(error));
}
