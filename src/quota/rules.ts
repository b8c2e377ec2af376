/**
 * Quota rules: which limits and cost apply to one application calling one endpoint, and the one
 * schema every rule is checked with (a configured list, a rule source's answer, the defaults).
 *
 * Resolution: a rule for this client and path (scope `client`), else a rule for the path (scope
 * `global`), else the defaults (scope `system`). A field a rule leaves out takes the default for
 * that field; it is not inherited from the global rule. Limit 0 means unlimited.
 */
import { z } from 'zod';
import { countOption } from '../core/option-schemas.js';
import { parseConfig } from '../core/validation.js';
import { readApiPath } from './api-path.js';
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

/** The system rule: 60 per minute, 1000 per day, month unlimited, cost 1 unless configured. */
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
 * call, so a database-backed source should cache. What it answers is checked like a configured
 * rule; a bad rule counts as a failure of the source (`onStoreError`).
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

const apiPath = z.string().transform((path, ctx) => {
  const read = readApiPath(path);
  if ('path' in read) return read.path;
  ctx.issues.push({ code: 'custom', message: read.problem, input: path });
  return z.NEVER;
});

/** One rule, its path normalised. */
export const quotaRuleSchema = z
  .strictObject({
    scope: z.enum(['client', 'global']),
    clientId: z.string().min(1).optional(),
    apiPath,
    cost: countOption.optional(),
    minute: countOption.optional(),
    day: countOption.optional(),
    month: countOption.optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.scope === 'client' && rule.clientId === undefined) ctx.addIssue({ code: 'custom', message: 'a client rule needs a clientId', path: ['clientId'] });
    if (rule.scope === 'global' && rule.clientId !== undefined) ctx.addIssue({ code: 'custom', message: 'a global rule must not have a clientId', path: ['clientId'] });
  });

/** The system rule; a missing field keeps its system default. */
export const quotaDefaultsSchema = z
  .strictObject({
    minute: countOption.default(SYSTEM_DEFAULTS.minute),
    day: countOption.default(SYSTEM_DEFAULTS.day),
    month: countOption.default(SYSTEM_DEFAULTS.month),
    cost: countOption.default(SYSTEM_DEFAULTS.cost),
  })
  .prefault({});

/**
 * Checks one rule and returns it with a normalised path. `where` names it in the message.
 * @throws ConfigurationError (`invalid_option`)
 */
export function checkRule(rule: unknown, where = 'quota rule'): QuotaRule {
  return parseConfig(quotaRuleSchema, rule, 'invalid_option', where);
}

/** The rule in force: client > global > system. A rule's missing fields take the defaults. */
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
