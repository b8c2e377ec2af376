import { header, type PlatformRequest } from './http.js';

/**
 * The Bearer token of the request (RFC 6750 2.1): undefined when the request has no Bearer
 * credentials at all (no Authorization header, or another scheme), `''` when they are malformed.
 * Userinfo, the quota guard and the admin API all read it here.
 */
export function bearerToken(request: PlatformRequest): string | undefined {
  const value = header(request, 'authorization');
  if (!value) return undefined;
  // Well-formed credentials first: the quota guard reads them on every call.
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(value);
  if (match) return match[1];
  return /^Bearer(?: |$)/i.test(value) ? '' : undefined;
}

/** RFC 6750 2.1 b64token: the characters a Bearer token may hold. */
export const BEARER_TOKEN_SYNTAX = /^[A-Za-z0-9\-._~+/]+=*$/;
