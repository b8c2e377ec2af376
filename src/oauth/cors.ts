/**
 * CORS (the Fetch standard's CORS protocol) for the endpoints a browser app on another origin
 * calls: discovery, the JWKS, the token endpoint, revocation and userinfo
 * (docs/oauth.md#browser-apps-on-another-origin). None of them reads a cookie or any other
 * credential a browser adds by itself, so every origin may read their answers: `*`, and never
 * `Access-Control-Allow-Credentials`. For a platform reachable from the internet, a page learns
 * nothing it could not learn by sending the same request from a server.
 *
 * Only userinfo answers a preflight, for its Bearer header. A public client's token and revocation
 * requests are forms, which browsers send without one; a client secret in an Authorization header
 * would need one, so a web page on another origin can never use a confidential client's secret.
 */
import type { RouteDoc } from '../core/route-doc.js';
import type { PlatformResponse } from '../core/http.js';

const READABLE: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  // RFC 6750 3 puts a Bearer error in WWW-Authenticate; a 429 or 503 says when to come back.
  'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
};

/** The answer, readable by a page of any origin. */
export function readableCrossOrigin(response: PlatformResponse): PlatformResponse {
  return { ...response, headers: { ...response.headers, ...READABLE } };
}

/** OPTIONS: what a browser asks before it sends a request with an Authorization header. */
export async function handlePreflight(): Promise<PlatformResponse> {
  return {
    status: 204,
    headers: {
      ...READABLE,
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'Authorization, Content-Type',
      'access-control-max-age': '600',
    },
    body: '',
  };
}

export const preflightDoc: RouteDoc = {
  operationId: 'oauth_userinfo_preflight',
  summary: 'The CORS preflight of userinfo: any origin may send a Bearer token, never cookies',
  tag: 'oauth',
  responses: { 204: { description: 'Access-Control-Allow-Origin `*`, the methods GET and POST, the headers Authorization and Content-Type' } },
};
