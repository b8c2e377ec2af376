/**
 * Quota rules: which limits and cost apply to one application calling one endpoint.
 *
 * Resolution (CONTRACT 5): a rule for this client and path (scope `client`), else a rule for the
 * path (scope `global`), else the defaults (scope `system`). A field a rule leaves out takes the
 * default for that field; it is not inherited from the global rule. Limit 0 means unlimited.
 */
import { BadRequestError } from '../core/errors.js';
import { normalizePath } from '../core/router.js';
import type { QuotaPeriod } from './periods.js';

export type QuotaScope = 'client' | 'global' | 'system';

/** One configured rule. Limits are non-negative integers, 0 = unlimited; a missing limit is the default. */
export interface QuotaRule {
  scope: 'client' | 'global';
  /** Required for scope `client`, forbidden for scope `global`. */
  clientId?: string;
  /** The endpoint, e.g. `/openapi/v1/orders`; normalised like request paths. */
  apiPath: string;
  /** Units one call consumes from every period. Default: `defaults.cost`. */
  cost?: number;
  minute?: number;
  day?: number;
  month?: number;
}

/** The system rule. Contract defaults: 60 per minute, 1000 per day, month unlimited, cost 1. */
export interface QuotaDefaults {
  minute: number;
  day: number;
  month: number;
  cost: number;
}

export const SYSTEM_DEFAULTS: Readonly<QuotaDefaults> = Object.freeze({ minute: 60, day: 1000, month: 0, cost: 1 });

/** What a rule source found for one client and path; either may be missing. */
export interface MatchedRules {
  client?: QuotaRule;
  global?: QuotaRule;
}

/**
 * Where rules come from. Asynchronous so a database can back it; it is asked on every guarded
 * call, so a database-backed source should cache.
 *
 * @example
 * const fromDb: RuleSource = {
 *   async findRules(clientId, apiPath) {
 *     const { rows } = await pool.query('SELECT * FROM quota_rule WHERE api_path = $1 AND (client_id = $2 OR client_id IS NULL)', [apiPath, clientId]);
 *     return { client: rows.find((r) => r.client_id)?.rule, global: rows.find((r) => !r.client_id)?.rule };
 *   },
 * };
 */
export interface RuleSource {
  /** `apiPath` is already normalised (see `normalizeApiPath`). */
  findRules(clientId: string, apiPath: string): Promise<MatchedRules> | MatchedRules;
}

/** The rule in force for one call. */
export interface ResolvedQuotaRule {
  scope: QuotaScope;
  apiPath: string;
  cost: number;
  /** Per period; 0 = unlimited. */
  limits: Readonly<Record<QuotaPeriod, number>>;
}

/** Longest api path accepted; longer ones are refused rather than stored as keys. */
export const MAX_API_PATH_LENGTH = 1024;

/**
 * The endpoint an API path names: query string and fragment removed, trailing slashes collapsed
 * (`/openapi/v1/ping/` and `/openapi/v1/ping?x=1` are `/openapi/v1/ping`), letters folded to lower
 * case: Express and Connect route case-insensitively by default, so `/PING` reaches the same
 * handler and must not get an allowance of its own.
 *
 * @throws BadRequestError (400) for a path that does not start with `/`, is longer than 1024
 *   characters or holds control characters.
 */
export function normalizeApiPath(path: string): string {
  if (typeof path !== 'string') throw new BadRequestError('api_path must be a string');
  let end = path.length;
  const query = path.indexOf('?');
  if (query !== -1) end = query;
  const fragment = path.indexOf('#');
  if (fragment !== -1 && fragment < end) end = fragment;
  const bare = path.slice(0, end);
  if (!bare.startsWith('/')) throw new BadRequestError(`api_path must start with "/", got ${JSON.stringify(path.slice(0, 80))}`);
  const out = normalizePath(bare);
  if (out.length > MAX_API_PATH_LENGTH) throw new BadRequestError(`api_path must be at most ${MAX_API_PATH_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(out)) throw new BadRequestError('api_path must not contain control characters');
  return out.toLowerCase();
}

const LIMIT_FIELDS = ['minute', 'day', 'month', 'cost'] as const;

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Checks the defaults; fills the missing ones from the system defaults. @throws TypeError */
export function checkDefaults(defaults: Partial<QuotaDefaults> = {}): QuotaDefaults {
  const out: QuotaDefaults = { ...SYSTEM_DEFAULTS };
  for (const field of LIMIT_FIELDS) {
    const value = defaults[field];
    if (value === undefined) continue;
    if (!isCount(value)) throw new TypeError(`quota defaults.${field} must be a non-negative integer, got ${String(value)}`);
    out[field] = value;
  }
  return out;
}

/**
 * Checks one rule and returns it with a normalised path. `where` names it in the message.
 * @throws TypeError
 */
export function checkRule(rule: QuotaRule, where = 'quota rule'): QuotaRule {
  if (rule === null || typeof rule !== 'object') throw new TypeError(`${where} must be an object`);
  const known = new Set(['scope', 'clientId', 'apiPath', ...LIMIT_FIELDS]);
  for (const key of Object.keys(rule)) {
    if (!known.has(key)) throw new TypeError(`${where}: unknown field ${key}`);
  }
  if (rule.scope !== 'client' && rule.scope !== 'global') {
    throw new TypeError(`${where}: scope must be "client" or "global", got ${JSON.stringify(rule.scope)}`);
  }
  if (rule.scope === 'client' && (typeof rule.clientId !== 'string' || rule.clientId === '')) {
    throw new TypeError(`${where}: a client rule needs a clientId`);
  }
  if (rule.scope === 'global' && rule.clientId !== undefined) {
    throw new TypeError(`${where}: a global rule must not have a clientId`);
  }
  let apiPath: string;
  try {
    apiPath = normalizeApiPath(rule.apiPath);
  } catch (error) {
    throw new TypeError(`${where}: ${(error as Error).message}`);
  }
  for (const field of LIMIT_FIELDS) {
    const value = rule[field];
    if (value !== undefined && !isCount(value)) {
      throw new TypeError(`${where}: ${field} must be a non-negative integer, got ${String(value)}`);
    }
  }
  return { ...rule, apiPath };
}

/**
 * The rule in force: client > global > system. A rule's missing fields take the defaults.
 */
export function resolveRule(matched: MatchedRules, apiPath: string, defaults: QuotaDefaults): ResolvedQuotaRule {
  const rule = matched.client ?? matched.global;
  const scope: QuotaScope = matched.client ? 'client' : matched.global ? 'global' : 'system';
  return {
    scope,
    apiPath,
    cost: rule?.cost ?? defaults.cost,
    limits: {
      minute: rule?.minute ?? defaults.minute,
      day: rule?.day ?? defaults.day,
      month: rule?.month ?? defaults.month,
    },
  };
}

/** A rule whose cost exceeds one of its finite limits can never be admitted. */
export function unsatisfiable(rule: ResolvedQuotaRule): QuotaPeriod | undefined {
  for (const period of ['minute', 'day', 'month'] as const) {
    const limit = rule.limits[period];
    if (limit > 0 && rule.cost > limit) return period;
  }
  return undefined;
}

interface PathRules {
  global?: QuotaRule;
  byClient: Map<string, QuotaRule>;
}

/** A rule source over a fixed list, indexed by path then client: one or two Map lookups per call. */
export interface StaticRuleSource extends RuleSource {
  readonly rules: readonly QuotaRule[];
  findRules(clientId: string, apiPath: string): MatchedRules;
}

/**
 * @example
 * const rules = createStaticRuleSource([
 *   { scope: 'global', apiPath: '/openapi/v1/orders', minute: 10, cost: 2 },
 *   { scope: 'client', clientId: 'partner-1', apiPath: '/openapi/v1/orders', minute: 100 },
 * ]);
 * @throws TypeError for an invalid rule or two rules for the same scope, client and path.
 */
export function createStaticRuleSource(rules: readonly QuotaRule[] = []): StaticRuleSource {
  if (!Array.isArray(rules)) throw new TypeError('quota rules must be an array');
  const index = new Map<string, PathRules>();
  const checked = rules.map((rule, i) => checkRule(rule, `quota rules[${i}]`));
  checked.forEach((rule, i) => {
    let entry = index.get(rule.apiPath);
    if (!entry) index.set(rule.apiPath, (entry = { byClient: new Map() }));
    if (rule.scope === 'global') {
      if (entry.global) throw new TypeError(`quota rules[${i}]: a second global rule for ${rule.apiPath}`);
      entry.global = rule;
    } else {
      const clientId = rule.clientId as string;
      if (entry.byClient.has(clientId)) throw new TypeError(`quota rules[${i}]: a second rule for client ${clientId} on ${rule.apiPath}`);
      entry.byClient.set(clientId, rule);
    }
  });
  const empty: MatchedRules = Object.freeze({});
  return {
    rules: checked,
    findRules(clientId, apiPath) {
      const entry = index.get(apiPath);
      if (!entry) return empty;
      const client = entry.byClient.get(clientId);
      if (client) return { client, global: entry.global };
      return entry.global ? { global: entry.global } : empty;
    },
  };
}
