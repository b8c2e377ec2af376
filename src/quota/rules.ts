/**
 * Quota rules: which limits and cost apply to one application calling one endpoint, and the one
 * schema every rule is checked with (a configured list, a rule source's answer, the defaults).
 *
 * Resolution: a rule for this client and path (scope `client`), else a rule for the path (scope
 * `global`), else the defaults (scope `system`). A field a rule leaves out takes the default for
 * that field; it is not inherited from the global rule. Limit 0 means unlimited.
 */
import { z } from 'zod';
import { ConfigurationError, configurationError, issuesText } from '../core/errors.js';
import { isObjectLiteral } from '../core/plain-object.js';
import { countOption } from '../core/option-schemas.js';
import { joinField, parseConfig } from '../core/validation.js';
import { hasDotSegment, readApiPath } from './api-path.js';
import type { QuotaPeriod } from './periods.js';

export type QuotaScope = 'client' | 'global' | 'system';

/**
 * The largest cost of a call and the largest limit of a period that a rule, the defaults or a
 * consume request may name, so that no store's counter overflows or loses precision: integers are
 * exact up to 2^53 - 1 (about 9.007e15) in JavaScript (the memory store, and what ioredis and pg
 * answer) and in Redis's Lua scripts, and a PostgreSQL bigint or a Redis INCRBY fails past
 * 2^63 - 1 (about 9.22e18), which the service would take for a store outage.
 *
 * An admitted call adds its cost to every bucket, limited or not (QuotaStore.consume). A limited
 * bucket never holds more than its limit plus, for an instant (the Redis script charges, then
 * takes back), one cost: at most 1e12 + 1000, exact everywhere. An unlimited bucket (limit 0)
 * grows by the cost of every admitted call for as long as it lives; the longest is a month, 31
 * days and one hour of a daylight-saving change, about 2.68e6 s. At cost 1000 its count reaches
 * 2^53 after 9.0e12 calls: 3.36 million a second, every second of the month, all on the one
 * counter of one client and path. Measured on a 2-CPU machine, no store takes one counter that
 * fast: the memory store answered 2.4 million `consume` calls a second in a tight loop (a process
 * guards about 4,000 HTTP calls a second, docs/performance.md), Redis runs its consume script in
 * 6.5 µs (INFO commandstats), one script at a time (about 150,000 a second), and PostgreSQL
 * charged 247,000 a second with 2000 calls of one process in flight. Past 2^53 nothing would fail
 * even so: only the `used` reported for an unlimited period would be rounded; a 64-bit overflow
 * needs 9.2e15 calls, 3.4 billion a second. A cost of 1,000,000 instead would reach 2^53 at 3,360
 * calls a second, a load one process serves: hence 1000.
 */
export const MAX_COST = 1000;
/** See MAX_COST. Above any useful limit: 1e12 a month is 373,000 calls a second. */
export const MAX_LIMIT = 1e12;

/**
 * One configured rule. Limits are integers from 0 (unlimited) to 1e12, the cost one from 0 to
 * 1000 (MAX_LIMIT, MAX_COST: what no store's counter can overflow with); a missing one is the default.
 */
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

/**
 * A rule's path is normalised like a request's, and may not hold a `.` or `..` segment: the fetch
 * handler, and Hono on Node.js and Bun, resolve those (the URL standard, RFC 3986 5.2.4) before
 * the guard sees a path, where Express, Koa, Connect, Fastify and Hono on Deno count the path as
 * sent, so such a rule would apply on some hosts and never on others. Refused, it cannot be
 * stored and silently never match; resolving it instead would give the rule another path than the
 * operator wrote, one that Express routes elsewhere when a client sends the dots.
 */
const apiPath = z.string().transform((path, ctx) => {
  const read = readApiPath(path);
  if ('problem' in read) {
    ctx.issues.push({ code: 'custom', message: read.problem, input: path });
    return z.NEVER;
  }
  if (hasDotSegment(read.path)) {
    ctx.issues.push({ code: 'custom', message: 'must not hold "." or ".." segments: hosts that follow the URL standard resolve them before the guard sees a path', input: path });
    return z.NEVER;
  }
  return read.path;
});

/** Units one call takes (see MAX_COST for the bound). */
const costOption = countOption.max(MAX_COST);
/** A period's limit, 0 = unlimited (see MAX_LIMIT for the bound). */
const limitOption = countOption.max(MAX_LIMIT);

/** One rule, its path normalised. */
export const quotaRuleSchema = z
  .strictObject({
    scope: z.enum(['client', 'global']),
    clientId: z.string().min(1).optional(),
    apiPath,
    cost: costOption.optional(),
    minute: limitOption.optional(),
    day: limitOption.optional(),
    month: limitOption.optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.scope === 'client' && rule.clientId === undefined) ctx.addIssue({ code: 'custom', message: 'a client rule needs a clientId', path: ['clientId'] });
    if (rule.scope === 'global' && rule.clientId !== undefined) ctx.addIssue({ code: 'custom', message: 'a global rule must not have a clientId', path: ['clientId'] });
  });

/** The system rule; a missing field keeps its system default. */
export const quotaDefaultsSchema = z
  .strictObject({
    minute: limitOption.default(SYSTEM_DEFAULTS.minute),
    day: limitOption.default(SYSTEM_DEFAULTS.day),
    month: limitOption.default(SYSTEM_DEFAULTS.month),
    cost: costOption.default(SYSTEM_DEFAULTS.cost),
  })
  .prefault({});

/**
 * Checks one rule and returns it with a normalised path. `where` names it in the message.
 * @throws ConfigurationError (`invalid_option`)
 */
export function checkRule(rule: unknown, where = 'quota rule'): QuotaRule {
  return parseConfig(quotaRuleSchema, rule, 'invalid_option', where);
}

/**
 * A rule source's answer, checked: nothing (undefined, null) or an object of `client` and
 * `global`. Anything else (an array of rules, a misspelt `Global`) is refused like a bad rule,
 * rather than taken for "no rule" and the defaults applied in silence.
 */
export function checkAnswer(answer: unknown, where: string): MatchedRules {
  if (answer === undefined || answer === null) return {};
  if (!isObjectLiteral(answer)) throw configurationError('invalid_option', where, 'must be an object of `client` and `global` rules');
  const unknown = Object.keys(answer).find((key) => key !== 'client' && key !== 'global');
  if (unknown !== undefined) throw configurationError('invalid_option', joinField(where, unknown), 'is not `client` or `global`');
  return answer as MatchedRules;
}

/** What is wrong with a rule `checkRule`, `checkFiledRule` or `checkAnswer` refused, for the log and the listing. */
export function refusalOf(error: unknown): string {
  return error instanceof ConfigurationError ? issuesText(error.issues) : String(error);
}

/** What names a rule: two rules with the same key cannot both apply. */
export type QuotaRuleKey = Pick<QuotaRule, 'scope' | 'clientId' | 'apiPath'>;

const described = (key: QuotaRuleKey) => (key.scope === 'client' ? `the client rule of ${JSON.stringify(key.clientId)} for ${key.apiPath}` : `the global rule for ${key.apiPath}`);

/**
 * `checkRule` for a rule found under `key` (a source's answer for one client and path, a stored
 * rule's key): one that names another client or path is refused too, so a rule never applies
 * anywhere but where it is found and listed.
 */
export function checkFiledRule(rule: unknown, key: QuotaRuleKey, where: string): QuotaRule {
  const checked = checkRule(rule, where);
  const wrong = checked.scope !== key.scope ? 'scope' : checked.apiPath !== key.apiPath ? 'apiPath' : key.scope === 'client' && checked.clientId !== key.clientId ? 'clientId' : undefined;
  if (wrong) throw configurationError('invalid_option', joinField(where, wrong), `names ${described(checked)}, not ${described(key)} where it is found`);
  return checked;
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
