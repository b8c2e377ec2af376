import { BadRequestError } from '../core/errors.js';
import { normalizePath } from '../core/router.js';

/** Longest api path accepted; longer ones are refused rather than stored as keys. */
export const MAX_API_PATH_LENGTH = 1024;

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
  const out = normalizePath(bare);
  if (out.length > MAX_API_PATH_LENGTH) return { problem: `must be at most ${MAX_API_PATH_LENGTH} characters` };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(out)) return { problem: 'must not contain control characters' };
  return { path: out.toLowerCase() };
}

/**
 * The endpoint an API path names: query string and fragment removed, trailing slashes collapsed
 * (`/openapi/v1/ping/` and `/openapi/v1/ping?x=1` are `/openapi/v1/ping`), letters folded to lower
 * case: Express and Connect route case-insensitively by default, so `/PING` reaches the same
 * handler and must not get an allowance of its own.
 *
 * @throws BadRequestError (400) for a path that does not start with `/`, is longer than 1024
 *   characters or holds control characters.
 */
export function normalizeApiPath(path: string): string {
  const read = readApiPath(path);
  if ('problem' in read) throw new BadRequestError(`api_path ${read.problem}`);
  return read.path;
}
