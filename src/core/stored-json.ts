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
