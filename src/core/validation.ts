import type { z } from 'zod';
import { ValidationError, type FieldIssue } from './errors.js';

/** Renders a zod path the way a caller writes it: `goods[0].goodsName`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out || '(body)';
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

/** One zod issue in, one or more field issues out, each naming the field and the rule. */
function toFieldIssues(issue: z.core.$ZodIssue, input: unknown): FieldIssue[] {
  const field = fieldPath(issue.path);
  const missing = issue.path.length > 0 && valueAt(input, issue.path) === undefined;
  if (missing && issue.code !== 'custom' && issue.code !== 'unrecognized_keys') {
    return [{ field, rule: 'required', message: 'is required' }];
  }
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        field: fieldPath([...issue.path, key]),
        rule: 'unknown_field',
        message: 'is not a field of this operation',
      }));
    case 'invalid_type':
      if (issue.expected === 'int') return [{ field, rule: 'integer', message: 'must be an integer' }];
      return [{ field, rule: 'type', message: `must be ${issue.expected === 'array' ? 'an' : 'a'} ${issue.expected}` }];
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

/** Parses `input` with `schema` or throws a ValidationError listing every broken rule. */
export function parseWith<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(result.error.issues.flatMap((issue) => toFieldIssues(issue, input)));
}
