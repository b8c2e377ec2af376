/**
 * docs/options.md against the schemas the platform validates with: the same options, the same
 * defaults. The TypeScript option types are held to the same keys at compile time.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { courierOptionsSchema, type CourierOptions } from '../../src/courier/options.js';
import { clientConfigSchema } from '../../src/oauth/client-record.js';
import { oauthOptionsSchema, type OAuthClientConfig, type OAuthOptions } from '../../src/oauth/options.js';
import { platformOptionsSchema, type CourierPlatformOptions } from '../../src/options.js';
import { quotaOptionsSchema, quotaServiceOptionsSchema, type QuotaOptions, type QuotaServiceOptions } from '../../src/quota/options.js';
import { quotaRuleSchema, type QuotaDefaults, type QuotaRule } from '../../src/quota/rules.js';

const page = readFileSync(fileURLToPath(new URL('../../docs/options.md', import.meta.url)), 'utf8');

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type KeysOf<S extends z.ZodType> = keyof z.input<S>;
// Fails to compile when a public option type and its schema list different options.
const typesMatchSchemas: [
  Same<keyof CourierPlatformOptions, KeysOf<typeof platformOptionsSchema>>,
  Same<keyof CourierOptions, KeysOf<typeof courierOptionsSchema>>,
  Same<keyof OAuthOptions, KeysOf<typeof oauthOptionsSchema>>,
  Same<keyof OAuthClientConfig, KeysOf<typeof clientConfigSchema>>,
  Same<keyof QuotaOptions, KeysOf<typeof quotaOptionsSchema>>,
  Same<keyof QuotaServiceOptions, KeysOf<typeof quotaServiceOptionsSchema>>,
  Same<keyof QuotaRule, KeysOf<typeof quotaRuleSchema>>,
  Same<keyof QuotaDefaults, keyof NonNullable<z.input<typeof quotaOptionsSchema.shape.defaults>>>,
] = [true, true, true, true, true, true, true, true];

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  defaultValue?: unknown;
}
const defOf = (schema: z.ZodType) => (schema as unknown as { def: Def }).def;

/** JavaScript literal syntax, as the page writes defaults: `'/oauth'`, `10000`, `['openid', 'email']`. */
function literal(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => ` ${k}: ${literal(v)}`).join(',')}${Object.keys(value).length ? ' ' : ''}}`;
  return String(value);
}

interface Documented {
  /** The default the schema applies when the option is left out, if any. */
  default?: unknown;
}

/**
 * Every option a schema accepts, by dotted name: objects are walked into (`oauth.lifetimes.code`),
 * arrays of objects too (`oauth.clients[].id`); a part that can be `false` is an option itself.
 */
function optionsOf(schema: z.ZodType, name: string, out: Map<string, Documented>): Map<string, Documented> {
  let current = schema;
  let found: Documented = {};
  for (;;) {
    const def = defOf(current);
    if ((def.type === 'default' || def.type === 'prefault') && !('default' in found)) found = { default: def.defaultValue };
    const inner = def.type === 'pipe' ? def.in : def.innerType;
    if (!inner || !['optional', 'default', 'prefault', 'pipe', 'nullable'].includes(def.type)) break;
    current = inner;
  }
  const def = defOf(current);
  const branches = def.type === 'union' ? def.options! : [current];
  const objects = branches.filter((branch) => defOf(branch).type === 'object');
  const arrays = branches.filter((branch) => defOf(branch).type === 'array');
  if (name && (def.type !== 'object' || branches.length > 1)) out.set(name, found);
  for (const object of objects) for (const [key, field] of Object.entries(defOf(object).shape!)) optionsOf(field, name ? `${name}.${key}` : key, out);
  for (const array of arrays) {
    const element = defOf(array).element!;
    if (defOf(element).type === 'object') optionsOf(element, `${name}[]`, out);
  }
  return out;
}

/** The option rows of the page's tables: name and the Default cell. */
function documentedRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of page.split('\n')) {
    const match = /^\| `([^`]+)` \|/.exec(line);
    if (!match) continue;
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    expect(rows.has(match[1]!), `${match[1]} is documented twice`).toBe(false);
    rows.set(match[1]!, cells[3]!);
  }
  return rows;
}

describe('docs/options.md', () => {
  const schemaOptions = optionsOf(platformOptionsSchema, '', new Map());
  const rows = documentedRows();

  it('the option types and the schemas list the same options', () => {
    expect(typesMatchSchemas.every(Boolean)).toBe(true);
  });

  it('documents exactly the options the schemas accept', () => {
    expect([...rows.keys()].sort()).toEqual([...schemaOptions.keys()].sort());
  });

  it.each([...schemaOptions].filter(([, option]) => 'default' in option))('%s: documents the default the schema applies', (name, option) => {
    expect(rows.get(name)?.startsWith(`\`${literal(option.default)}\``), `${name}: ${rows.get(name)}`).toBe(true);
  });

  it('createQuotaService takes the quota options but basePath, verifyToken and history, plus now and logger', () => {
    const part = Object.keys(quotaOptionsSchema.shape).filter((key) => !['basePath', 'verifyToken', 'history'].includes(key));
    expect(Object.keys(quotaServiceOptionsSchema.shape).sort()).toEqual([...part, 'now', 'logger'].sort());
    expect(page).toMatch(/`createQuotaService\(options\)` takes the `quota` options above except `basePath`,\s+`verifyToken` and `history`, plus `now` and `logger`/);
  });
});
