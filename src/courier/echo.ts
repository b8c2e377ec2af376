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
 * echoed in lower case as often as in upper). Empty values are skipped; a value left unchanged
 * keeps its identity, so an answer without an echo is handed on as it came.
 */
export function echoRedactor(secret: string, sign: unknown): <T>(value: T) => T {
  const patterns = [secret && new RegExp(escapeRegExp(secret), 'g'), typeof sign === 'string' && sign && new RegExp(escapeRegExp(sign), 'gi')].filter(
    (pattern): pattern is RegExp => pattern instanceof RegExp,
  );
  const inText = (text: string) => patterns.reduce((out, pattern) => out.replace(pattern, REDACTED), text);

  const redact = (value: unknown): unknown => {
    if (typeof value === 'string') return inText(value);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      const items = value.map(redact);
      return items.some((item, index) => item !== value[index]) ? items : value;
    }
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const [newKey, newItem] = [inText(key), redact(item)];
      if (newKey !== key || newItem !== item) changed = true;
      return [newKey, newItem] as const;
    });
    return changed ? Object.fromEntries(entries) : value;
  };
  return <T>(value: T) => redact(value) as T;
}
