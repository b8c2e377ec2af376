import { CONTROL_CHARACTERS_PROBLEM, NO_CONTROL_CHARACTERS } from '../core/control-characters.js';
import { BadRequestError } from '../core/errors.js';
import { normalizePath } from '../core/router.js';

/** Longest api path accepted, once percent-encoded; longer ones are refused rather than stored as keys. */
export const MAX_API_PATH_LENGTH = 1024;

/**
 * The characters whose escape a path names the same endpoint as: the unreserved ones (RFC 3986
 * 2.3), and `!'()*`, which `decodeURI` decodes too, so Hono routes `/a%21` where it routes `/a!`.
 */
const DECODED = /^[A-Za-z0-9\-._~!'()*]$/;

/**
 * RFC 3986 6.2.2.2: `%70ing` is `ping`. Fastify and Hono decode a path before they route it, so
 * every spelling reaches the same handler and must not get an allowance of its own. Other
 * escapes (`%2F`, `%20`, `%25`, `%3B`) stay as they are: decoding them could make a path the host
 * never routed there.
 */
function decodeSameEndpointEscapes(path: string): string {
  if (!path.includes('%')) return path;
  return path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return DECODED.test(char) ? char : escape;
  });
}

/** RFC 3986 3.3: a path of unreserved characters, sub-delims, `:`, `@`, `/` and `%` escapes only. */
const URI_PATH = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;
/** What a URI path cannot hold as it is: any other character, and a `%` that starts no escape. */
const NOT_URI_PATH = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]+|%(?![0-9A-Fa-f]{2})/g;

/**
 * `/openapi/v1/Ärger` is `/openapi/v1/%C3%84rger`: what a URI path cannot hold as it is (letters
 * beyond ASCII, a space, `{`) is percent-encoded as UTF-8 (RFC 3987 3.1, RFC 3986 2.1), as every
 * client sends it and as the URL standard encodes it. A rule written with the character and a
 * request that arrives encoded then name one endpoint; Node refuses raw bytes beyond ASCII in a
 * request target, so an encoded path is all an Express, Koa or Connect host ever sees, while a
 * Fastify route or a guard's `apiPath` may hold the character itself. Undefined for text that is
 * no Unicode (a lone surrogate), which has no UTF-8 form.
 */
function encodeNonUriCharacters(path: string): string | undefined {
  if (URI_PATH.test(path)) return path;
  try {
    return path.replace(NOT_URI_PATH, (characters) => encodeURIComponent(characters));
  } catch {
    return undefined;
  }
}

/** Why `path` cannot name an endpoint, or its normalised form. */
export function readApiPath(path: unknown): { path: string } | { problem: string } {
  if (typeof path !== 'string') return { problem: 'must be a string' };
  let end = path.length;
  const query = path.indexOf('?');
  if (query !== -1) end = query;
  const fragment = path.indexOf('#');
  if (fragment !== -1 && fragment < end) end = fragment;
  const bare = path.slice(0, end);
  if (!bare.startsWith('/')) return { problem: `must start with "/", got ${JSON.stringify(path.slice(0, 80))}` };
  if (!NO_CONTROL_CHARACTERS.test(bare)) return { problem: CONTROL_CHARACTERS_PROBLEM };
  const encoded = encodeNonUriCharacters(bare);
  if (encoded === undefined) return { problem: 'must be Unicode text (it holds a lone surrogate)' };
  const out = normalizePath(decodeSameEndpointEscapes(encoded));
  if (out.length > MAX_API_PATH_LENGTH) return { problem: `must be at most ${MAX_API_PATH_LENGTH} characters once percent-encoded` };
  // After encoding, letters are ASCII only: `Ä` (%C3%84) and `ä` (%C3%A4) stay two endpoints, as Express routes them.
  return { path: out.toLowerCase() };
}

/**
 * An endpoint named by a query parameter (`api_path` of get_quota and the admin API) is the path
 * alone. A request's path never holds a `?` or `#` as it is (they end it), so the guard counts none:
 * one in the value is a `%3F` or `%23` of the path that the query's own decoding turned back into
 * the character, or a query string the caller appended. Either reading could name another
 * endpoint than the caller means, so the value is refused, saying how to write it.
 */
export const API_PATH_PARAMETER = {
  valid: (value: string): boolean => !value.includes('?') && !value.includes('#'),
  problem: 'must be the path alone, without "?" or "#": a path holds them escaped, %3F and %23, which a query carries URL-encoded once more (%253F, %2523)',
} as const;

/** A `.` or `..` segment, `%2E` already decoded: what the URL standard resolves away (RFC 3986 5.2.4). */
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)/;

/** A normalised path with a `.` or `..` segment. */
export function hasDotSegment(normalized: string): boolean {
  return DOT_SEGMENT.test(normalized);
}

/**
 * The endpoint an API path names: query string and fragment removed, trailing slashes collapsed
 * (`/openapi/v1/ping/` and `/openapi/v1/ping?x=1` are `/openapi/v1/ping`), what a URI path cannot
 * hold as it is percent-encoded as UTF-8 (`/openapi/v1/Ärger` is `/openapi/v1/%c3%84rger`),
 * percent-encoded letters, digits, `-._~` and `!'()*` decoded (`/openapi/v1/%70ing`), letters and escapes
 * folded to lower case: Express and Connect route case-insensitively by default, so `/PING`
 * reaches the same handler and must not get an allowance of its own.
 *
 * @throws BadRequestError (400) for a path that does not start with `/`, is longer than 1024
 *   characters once encoded, or holds control characters or a lone surrogate.
 */
export function normalizeApiPath(path: string): string {
  const read = readApiPath(path);
  if ('problem' in read) throw new BadRequestError(`api_path ${read.problem}`);
  return read.path;
}
