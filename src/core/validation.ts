import type { z } from 'zod';
import { closestKey, placesOf } from './did-you-mean.js';
import { ConfigurationError, ValidationError, type ConfigurationErrorCode, type FieldIssue } from './errors.js';

/** Renders a zod path the way a caller writes it: `goods[0].goodsName`. */
export function fieldPath(path: readonly PropertyKey[], empty = '(body)'): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out || empty;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function describeValues(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join(', ');
}

type Issue = z.core.$ZodIssue;

/**
 * A bad value inside a union (`quota: false | {...}`, `rules: [...] | RuleSource`) is reported by
 * zod as "invalid union". Descend into the branches the value got past the top of, so the message
 * names the field that is wrong; when no branch did, the union's own message stands.
 */
function leafIssues(issue: Issue, prefix: readonly PropertyKey[] = []): Issue[] {
  const path = [...prefix, ...issue.path];
  if (issue.code !== 'invalid_union') return [{ ...issue, path }];
  const deeper = issue.errors.filter((branch) => branch.some((inner) => inner.path.length > 0 || inner.code === 'invalid_union' || inner.code === 'unrecognized_keys'));
  if (deeper.length === 0) return [{ ...issue, path }];
  return deeper.flat().flatMap((inner) => leafIssues(inner, path));
}

/** How an unknown key is reported: the same words for every key, or words that may name the key meant. */
type UnknownField = string | ((path: readonly PropertyKey[], key: string) => string);

/** One zod issue in, one or more field issues out, each naming the field and the rule. */
function toFieldIssues(issue: Issue, input: unknown, unknownField: UnknownField, empty: string): FieldIssue[] {
  const field = fieldPath(issue.path, empty);
  const missing = issue.path.length > 0 && valueAt(input, issue.path) === undefined;
  if (missing && issue.code !== 'custom' && issue.code !== 'unrecognized_keys') {
    return [{ field, rule: 'required', message: 'is required' }];
  }
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        field: fieldPath([...issue.path, key], empty),
        rule: 'unknown_field',
        message: typeof unknownField === 'string' ? unknownField : unknownField(issue.path, key),
      }));
    case 'invalid_type':
      if (issue.expected === 'int') return [{ field, rule: 'integer', message: 'must be an integer' }];
      // A record is what a caller writes as an object: `{ ... }`.
      if (issue.expected === 'record') return [{ field, rule: 'type', message: 'must be an object' }];
      return [{ field, rule: 'type', message: `must be ${issue.expected === 'array' || issue.expected === 'object' ? 'an' : 'a'} ${issue.expected}` }];
    case 'invalid_value':
      return [{ field, rule: 'enum', message: `must be one of ${describeValues(issue.values)}` }];
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') {
        return [{ field, rule: 'min_length', message: min <= 1 ? 'must not be empty' : `must be at least ${min} characters` }];
      }
      if (issue.origin === 'array') return [{ field, rule: 'min_items', message: `must have at least ${min} item(s)` }];
      return [{ field, rule: 'min', message: `must be ${issue.inclusive ? 'at least' : 'greater than'} ${min}` }];
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return [{ field, rule: 'max_length', message: `must be at most ${max} characters` }];
      if (issue.origin === 'array') return [{ field, rule: 'max_items', message: `must have at most ${max} items` }];
      return [{ field, rule: 'max', message: `must be ${issue.inclusive ? 'at most' : 'less than'} ${max}` }];
    }
    case 'invalid_format':
      return [{ field, rule: 'format', message: issue.message }];
    case 'custom': {
      const rule = typeof issue.params?.rule === 'string' ? issue.params.rule : 'custom';
      return [{ field, rule, message: issue.message }];
    }
    default:
      return [{ field, rule: issue.code, message: issue.message }];
  }
}

/** Parses `input` with `schema` or throws a ValidationError (400) listing every broken rule. */
export function parseWith<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(result.error.issues.flatMap((issue) => toFieldIssues(issue, input, 'is not a field of this operation', '(body)')));
}

/**
 * A query string as an object, for `parseWith`. A parameter given twice is a 400 naming it
 * (docs/errors.md): which of `status=active&status=suspended` was meant?
 */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [name, value] of query) {
    if (out.has(name)) repeated.add(name);
    else out.set(name, value);
  }
  if (repeated.size > 0) throw new ValidationError([...repeated].map((field) => ({ field, rule: 'once', message: 'must be given once' })));
  return Object.fromEntries(out);
}

/** `quota` + `rules[0].clientId` is `quota.rules[0].clientId`. */
export function joinField(prefix: string, field: string): string {
  if (!prefix) return field || 'options';
  if (!field) return prefix;
  return field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`;
}

/**
 * Parses configuration (options, a client record) or throws a ConfigurationError naming every
 * bad field, each under `prefix` (`quota` makes `quota.rules[0].clientId`).
 */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown, code: ConfigurationErrorCode, prefix = ''): z.output<S> {
  const unknown = code === 'invalid_option' ? 'is not an option' : 'is not a known field';
  const unknownField = (path: readonly PropertyKey[], key: string) => {
    const meant = closestKey(schema, path, key);
    const here = meant === undefined ? undefined : `${unknown}; did you mean \`${meant}\`?`;
    const placed = (within: 'below' | 'anywhere') => {
      const places = placesOf(schema, path, key, within, (at) => fieldPath(at, '')).map((place) => `\`${joinField(prefix, place)}\``);
      if (places.length === 0) return undefined;
      return `${unknown} here; did you mean ${places.length === 1 ? places[0] : `${places.slice(0, -1).join(', ')} or ${places.at(-1)}`}?`;
    };
    // The likeliest first: a difference of case here, the name inside this object (`courier: { appId }`),
    // a typo of a name here (`scope` for `scopes`), the name elsewhere (`oauth: { timeZone }`).
    if (meant !== undefined && meant.toLowerCase() === key.toLowerCase()) return here as string;
    return placed('below') ?? here ?? placed('anywhere') ?? (code === 'invalid_option' ? `${unknown} (check the spelling)` : unknown);
  };
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues
    .flatMap((top) => leafIssues(top))
    .flatMap((issue) => toFieldIssues(issue, input, unknownField, ''))
    .map((issue) => ({ ...issue, field: joinField(prefix, issue.field) }));
  throw new ConfigurationError(code, issues);
}
