import OAuth2Server from '@node-oauth/oauth2-server';
import { jsonResponse, type PlatformResponse } from '../core/http.js';
import type { PlatformError } from '../core/errors.js';

/** RFC 6749 5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E. */
export function safeDescription(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, "'").slice(0, 300);
}

export class OAuthProtocolError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = new.target.name;
  }
}

/** The engine's messages are written for developers; ours are the ones a client sees. */
export function fromEngineError(error: unknown): OAuthProtocolError {
  if (error instanceof OAuthProtocolError) return error;
  if (error instanceof OAuth2Server.OAuthError && error.name !== 'server_error') {
    const description = error.message.replace(/`/g, '');
    return new OAuthProtocolError(error.name, description, error.code);
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

/** RFC 6749 4.1.2.1 and 5.2: a store outage is `temporarily_unavailable`, a retry may succeed. */
export function oauthErrorCode(error: PlatformError): string {
  if (error.code === 'store_unavailable') return 'temporarily_unavailable';
  return error.status === 401 ? 'invalid_client' : error.status >= 500 ? 'server_error' : 'invalid_request';
}

/** Errors of the shared core (body too large, wrong media type, a store outage, ...) in RFC 6749 form. */
export function formatPlatformErrorAsOAuth(error: PlatformError): PlatformResponse {
  return oauthErrorResponse(new OAuthProtocolError(oauthErrorCode(error), error.message, error.status, error.headers));
}
