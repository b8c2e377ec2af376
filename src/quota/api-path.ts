import { CONTROL_CHARACTERS_PROBLEM, NO_CONTROL_CHARACTERS } from '../core/control-characters.js';
import { BadRequestError } from '../core/errors.js';
import { normalizePath } from '../core/router.js';

/** Longest api path accepted; longer ones are refused rather than stored as keys. */
export const MAX_API_PATH_LENGTH = 1024;

/** RFC 3986 2.3: the characters whose percent-encoding names the same resource as the character. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * RFC 3986 6.2.2.2: `%70ing` is `ping`. Fastify and Hono decode a path before they route it, so
 * every spelling reaches the same handler and must not get an allowance of its own. Other
 * escapes (`%2F`, `%20`, `%25`) stay as they are: decoding them could make a path the host never
 * routed there.
 */
function decodeUnreserved(path: string): string {
  if (!path.includes('%')) return path;
  return path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : escape;
  });
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
  const out = normalizePath(decodeUnreserved(bare));
  if (out.length > MAX_API_PATH_LENGTH) return { problem: `must be at most ${MAX_API_PATH_LENGTH} characters` };
  if (!NO_CONTROL_CHARACTERS.test(out)) return { problem: CONTROL_CHARACTERS_PROBLEM };
  return { path: out.toLowerCase() };
}

/**
 * The endpoint an API path names: query string and fragment removed, trailing slashes collapsed
 * (`/openapi/v1/ping/` and `/openapi/v1/ping?x=1` are `/openapi/v1/ping`), percent-encoded
 * letters, digits and `-._~` decoded (`/openapi/v1/%70ing`), letters folded to lower case:
 * Express and Connect route case-insensitively by default, so `/PING` reaches the same handler
 * and must not get an allowance of its own.
 *
 * @throws BadRequestError (400) for a path that does not start with `/`, is longer than 1024
 *   characters or holds control characters.
 */
export function normalizeApiPath(path: string): string {
  const read = readApiPath(path);
  if ('problem' in read) throw new BadRequestError(`api_path ${read.problem}`);
  return read.path;
}
