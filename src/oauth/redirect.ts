import type { PlatformResponse } from '../core/http.js';
import { safeDescription, type OAuthProtocolError } from './errors.js';

/** A 302 to `uri` with `params` added to its query; never cached. */
export function redirectTo(uri: string, params: Record<string, string | undefined>): PlatformResponse {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(key, value);
  return { status: 302, headers: { location: url.toString(), 'cache-control': 'no-store' }, body: '' };
}

/** RFC 6749 4.1.2.1 with RFC 9207's `iss`: errors after the redirect URI is trusted go back to the client. */
export function redirectError(redirectUri: string, issuer: string, state: string | undefined, error: OAuthProtocolError): PlatformResponse {
  return redirectTo(redirectUri, { error: error.error, error_description: safeDescription(error.description), state, iss: issuer });
}

/**
 * RFC 9700 4.12: a redirect answering a POST is a 303, so the browser follows it with a GET and
 * never re-sends the form (and what it carries) to the client.
 */
export function afterPost(response: PlatformResponse): PlatformResponse {
  return response.status === 302 ? { ...response, status: 303 } : response;
}
