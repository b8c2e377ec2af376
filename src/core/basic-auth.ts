import { header, type PlatformRequest } from './http.js';

export type BasicAuth =
  | { kind: 'none' }
  | { kind: 'malformed'; reason: string }
  | { kind: 'basic'; user: string; password: string };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// RFC 7617 2.1: user and password are UTF-8; bytes that are not would reach a store or a signature as U+FFFD.
// ignoreBOM: a leading BOM is part of the user, not dropped, so two byte sequences never read as one.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads `Authorization: Basic` (RFC 7617). Another scheme counts as no Basic Auth, so a gateway's
 * own Bearer header does not break a proxy call. Both parts must be present.
 */
export function readBasicAuth(request: PlatformRequest): BasicAuth {
  const value = header(request, 'authorization');
  if (!value) return { kind: 'none' };
  const space = value.indexOf(' ');
  const scheme = (space === -1 ? value : value.slice(0, space)).toLowerCase();
  if (scheme !== 'basic') return { kind: 'none' };
  const token = value.slice(space + 1).trim();
  if (space === -1 || !BASE64.test(token)) return { kind: 'malformed', reason: 'Authorization: Basic must carry base64 of user:password' };
  let decoded: string;
  try {
    decoded = UTF8.decode(Buffer.from(token, 'base64'));
  } catch {
    return { kind: 'malformed', reason: 'Basic credentials must be UTF-8 text (RFC 7617 2.1)' };
  }
  const colon = decoded.indexOf(':');
  if (colon === -1) return { kind: 'malformed', reason: 'Basic credentials must be user:password' };
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  if (!user || !password) return { kind: 'malformed', reason: 'Basic credentials need both a user and a password' };
  return { kind: 'basic', user, password };
}
