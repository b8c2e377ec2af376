/**
 * What the admin API's listings share (`GET {admin}/clients`, `GET {admin}/usage`): a `limit`
 * with a default and a maximum, and an opaque `cursor` naming the last item of the page before,
 * answered as `next_cursor` beside `data` (null on the last page), as get_quota's `time` is.
 */
import { z } from 'zod';
import { okEnvelopeSchema } from '../core/envelope.js';
import { NO_CONTROL_CHARACTERS } from '../core/control-characters.js';
import { ValidationError } from '../core/errors.js';
import { jsonResponse, type PlatformResponse } from '../core/http.js';

/**
 * `limit`: a whole number from 1 to `max` in decimal digits, `fallback` when absent. Digits only:
 * JavaScript's `Number` would also read `0x10`, `1e2` and ` 5 `.
 */
export const pageLimit = (fallback: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: 'must be a whole number in decimal digits' })
    .transform(Number)
    .pipe(z.number().min(1).max(max))
    .prefault(String(fallback))
    .meta({ description: `Items a page, 1 to ${max}` });

export const pageCursor = z.string().min(1).optional().meta({ description: 'The `next_cursor` of the page before; opaque' });

/** The cursor naming `key` (a client id, an API path); opaque to callers, so its form may change. */
export const cursorOf = (key: string): string => Buffer.from(key, 'utf8').toString('base64url');

/**
 * The key a cursor names; anything that is not a cursor's exact spelling, or names a key no page
 * can end on (control characters: no client id or API path has them), is a 400 naming `cursor`.
 */
export function afterOf(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (key === '' || cursorOf(key) !== cursor || !NO_CONTROL_CHARACTERS.test(key)) {
    throw new ValidationError([{ field: 'cursor', rule: 'cursor', message: 'is not a next_cursor this API gave' }]);
  }
  return key;
}

/** A page's answer as the API document shows it: the envelope of `data`, and `next_cursor` beside it. */
export const pageResponseSchema = <T extends z.ZodType>(data: T) => okEnvelopeSchema(data).extend({ next_cursor: z.string().nullable() });

/** A page's answer: `data`, and the cursor of the next page beside it, null on the last. */
export const pageResponse = (data: unknown, next: string | null): PlatformResponse => jsonResponse(200, { code: 0, message: 'ok', data, next_cursor: next });
