/**
 * An upstream may repeat what it was sent: a debug message quoting the string it signed (the app
 * secret included, `…&key=<secret>`), or `data` echoing the body with its `sign`. The caller must
 * never read either (docs/courier.md#credentials): with configured credentials the caller does not
 * know the secret, and a sign with its known canonical string lets anyone test guesses of the
 * secret offline. So every occurrence in the answer's strings and keys is replaced.
 */
export const REDACTED = '[redacted]';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A redactor for one call: `secret` matched exactly, `sign` in any case (hexadecimal digests are
 * echoed in lower case as often as in upper). Empty values are skipped; an answer without an echo
 * is handed on as it came, the same object.
 */
export function echoRedactor(secret: string, sign: unknown): <T>(value: T) => T {
  const patterns = [secret && new RegExp(escapeRegExp(secret), 'g'), typeof sign === 'string' && sign && new RegExp(escapeRegExp(sign), 'gi')].filter(
    (pattern): pattern is RegExp => pattern instanceof RegExp,
  );
  // Non-global twins for testing: a global RegExp's test() moves its lastIndex.
  const probes = patterns.map((pattern) => new RegExp(pattern.source, pattern.flags.replace('g', '')));
  const echoes = (text: string) => probes.some((probe) => probe.test(text));
  const inText = (text: string) => patterns.reduce((out, pattern) => out.replace(pattern, REDACTED), text);

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
  return <T>(value: T) => (probes.length > 0 && holdsEcho(value) ? (redact(value) as T) : value);
}
