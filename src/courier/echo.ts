/**
 * An upstream may repeat what it was sent: a debug message quoting the string it signed (the app
 * secret included, `…&key=<secret>`), or `data` echoing the body with its `sign`. The caller must
 * never read either (docs/courier.md#credentials): with configured credentials the caller does not
 * know the secret, and a sign with its known canonical string lets anyone test guesses of the
 * secret offline. So every occurrence in the answer's strings and keys is replaced.
 */
import { REDACTED } from '../core/logger.js';

/**
 * A redactor for one call: `secret` matched exactly, `sign` in any case (hexadecimal digests are
 * echoed in lower case as often as in upper). Empty values are skipped; an answer without an echo
 * is handed on as it came, the same object.
 */
export function echoRedactor(secret: string, sign: unknown): <T>(value: T) => T {
  // `search` and `replace` ignore and reset the global pattern's lastIndex: one RegExp serves both.
  const signed = typeof sign === 'string' && sign ? new RegExp(sign.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi') : undefined;
  if (!secret && !signed) return (value) => value;
  const echoes = (text: string) => (secret !== '' && text.includes(secret)) || (signed !== undefined && text.search(signed) !== -1);
  const inText = (text: string) => {
    const out = secret ? text.replaceAll(secret, REDACTED) : text;
    return signed ? out.replace(signed, REDACTED) : out;
  };

  // Most answers hold no echo: one pass that allocates nothing decides, the copy is made only then.
  const holdsEcho = (value: unknown): boolean => {
    if (typeof value === 'string') return echoes(value);
    if (typeof value !== 'object' || value === null) return false;
    if (Array.isArray(value)) return value.some(holdsEcho);
    for (const key in value) if (Object.hasOwn(value, key) && (echoes(key) || holdsEcho((value as Record<string, unknown>)[key]))) return true;
    return false;
  };
  const redact = (value: unknown): unknown => {
    if (typeof value === 'string') return inText(value);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map(redact);
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [inText(key), redact(item)]));
  };
  return <T>(value: T) => (holdsEcho(value) ? (redact(value) as T) : value);
}
