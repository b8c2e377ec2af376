/**
 * "Did you mean `publicUrl`?" for a misspelt option: the known keys where the unknown one sits,
 * read from the schema itself, and the closest of them when it is close enough to be a typo. And
 * "did you mean `oauth.publicUrl`?" for an option written at the wrong level: a known key of
 * another object of the schema, by the same name.
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

/** The schemas `schema` can be, through wrappers (optional, default, pipe) and unions. */
function variants(schema: z.core.$ZodType): Def[] {
  const def = defOf(schema);
  const inner = def.innerType ?? def.in;
  if (inner) return variants(inner);
  return def.type === 'union' ? (def.options ?? []).flatMap(variants) : [def];
}

/** The object schemas that `path` can lead to (a union may give several). */
function objectsAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): Def[] {
  return variants(schema).flatMap((def) => {
    if (path.length === 0) return def.type === 'object' ? [def] : [];
    const [head, ...rest] = path;
    if (def.type === 'object' && typeof head === 'string' && def.shape?.[head]) return objectsAt(def.shape[head], rest);
    if (def.type === 'array' && typeof head === 'number' && def.element) return objectsAt(def.element, rest);
    if (def.type === 'record' && def.valueType) return objectsAt(def.valueType, rest);
    return [];
  });
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

/** How deep `placesOf` looks below the object it starts from, so a search stays small and finite. */
const MAX_DEPTH = 5;
/** How many places one message names: `basePath` at the top is an option of four parts. */
const MAX_PLACES = 4;

/**
 * Every path in or below `def` (rendered `clients[].id`) whose last key is `key`, case aside, with
 * the number of objects it goes through.
 */
function keysBelow(def: Def, key: string, trail: string, depth: number, found: Map<string, number>): void {
  if (depth > MAX_DEPTH) return;
  if (def.type === 'array' && def.element) {
    for (const element of variants(def.element)) keysBelow(element, key, `${trail}[]`, depth, found);
  }
  if (def.type !== 'object') return;
  for (const [name, child] of Object.entries(def.shape ?? {})) {
    const path = trail ? `${trail}.${name}` : name;
    if (name.toLowerCase() === key.toLowerCase() && !found.has(path)) found.set(path, depth);
    for (const inner of variants(child)) keysBelow(inner, key, path, depth + 1, found);
  }
}

/**
 * Where an option written at the wrong level belongs: the paths, from the schema's root, of the
 * known keys named `key` (case aside) in or below the object at `path` (`courier: { appId }` is
 * `courier.credentials.appId`), or, `anywhere`, in the whole schema (`oauth: { timeZone }` is
 * `quota.timeZone`). The shallowest, at most four; empty when the name is known nowhere there.
 * A key of the object at `path` itself differs from `key` in case only: `closestKey` names it.
 */
export function placesOf(
  schema: z.core.$ZodType,
  path: readonly PropertyKey[],
  key: string,
  within: 'below' | 'anywhere',
  render: (path: readonly PropertyKey[]) => string,
): string[] {
  const found = new Map<string, number>();
  const starts = within === 'anywhere' ? variants(schema) : objectsAt(schema, path);
  const base = within === 'anywhere' ? '' : render(path);
  for (const def of starts) keysBelow(def, key, base, 0, found);
  const shallowest = Math.min(...found.values());
  return [...found].filter(([, depth]) => depth === shallowest).map(([place]) => place).slice(0, MAX_PLACES);
}
