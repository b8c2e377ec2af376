/**
 * "Did you mean `publicUrl`?" for a misspelt option: the known keys where the unknown one sits,
 * read from the schema itself, and the closest of them when it is close enough to be a typo.
 */
import type { z } from 'zod';

interface Def {
  type: string;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
  options?: readonly z.core.$ZodType[];
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
}

const defOf = (schema: z.core.$ZodType) => schema._zod.def as unknown as Def;

/** The object schemas that `path` can lead to (a union may give several). */
function objectsAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): Def[] {
  const def = defOf(schema);
  const inner = def.innerType ?? def.in;
  if (inner) return objectsAt(inner, path);
  if (def.type === 'union') return (def.options ?? []).flatMap((option) => objectsAt(option, path));
  if (path.length === 0) return def.type === 'object' ? [def] : [];
  const [head, ...rest] = path;
  if (def.type === 'object' && typeof head === 'string' && def.shape?.[head]) return objectsAt(def.shape[head], rest);
  if (def.type === 'array' && typeof head === 'number' && def.element) return objectsAt(def.element, rest);
  if (def.type === 'record' && def.valueType) return objectsAt(def.valueType, rest);
  return [];
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known key closest to `key` in the object at `path`, when it differs only in case, by a few
 * edits (at most a third of the key's length, and 3), or by a unit left off (`ttl` for `ttlMs`);
 * else undefined.
 */
export function closestKey(schema: z.core.$ZodType, path: readonly PropertyKey[], key: string): string | undefined {
  const known = [...new Set(objectsAt(schema, path).flatMap((def) => Object.keys(def.shape ?? {})))];
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const d = distance(candidate.toLowerCase(), key.toLowerCase());
    const close = d <= Math.min(3, Math.floor(candidate.length / 3)) || (key.length >= 3 && candidate.startsWith(key));
    if (close && (!best || d < best.distance)) best = { key: candidate, distance: d };
  }
  return best?.key;
}
