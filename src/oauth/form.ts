import { readBody } from '../core/body.js';
import type { PlatformRequest } from '../core/http.js';
import { OAuthProtocolError } from './errors.js';

/**
 * The form of a POST as plain strings. A host parser in extended mode (qs) turns a repeated
 * parameter into an array: that is the same RFC 6749 3.1 violation as our own reader reports.
 */
export async function readForm(request: PlatformRequest, limit: number): Promise<Record<string, string>> {
  const body = (await readBody(request, { limit, accept: ['form'] })) ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new OAuthProtocolError('invalid_request', 'the body must be a form');
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) {
    if (typeof value !== 'string') throw new OAuthProtocolError('invalid_request', `parameter ${key} must be sent exactly once`);
    out[key] = value;
  }
  return out;
}
