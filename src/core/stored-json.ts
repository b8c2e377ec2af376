import { isPlainObject } from './plain-object.js';

/**
 * A record as a store read it back: the parsed JSON when the store holds text, the text itself
 * when it is not JSON, what the driver parsed otherwise. Stored records may have been written
 * around this library or damaged, so each is checked before use, and a bad one is never taken
 * for a failing store.
 */
export function storedJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/**
 * A record the store itself wrote as a JSON object (a grant, a token), parsed. Anything else is
 * damaged data and throws a SyntaxError, as JSON.parse does for text that is not JSON, which the
 * store guard takes for damaged data rather than a failing store (docs/stores.md).
 */
export function storedObject<T>(value: unknown): T {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  if (!isPlainObject(parsed)) throw new SyntaxError('a stored record is not a JSON object');
  return parsed as T;
}
