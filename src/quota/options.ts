/**
 * The quota part's options: the one place they are checked and their defaults set, whether they
 * arrive through `courierPlatform({ quota })` or `createQuotaService()`, so both report a mistake
 * with the same message.
 */
import { z } from 'zod';
import { systemClock, type Clock } from '../core/clock.js';
import { configurationError } from '../core/errors.js';
import { consoleLogger, safeLogger, type Logger } from '../core/logger.js';
import type { MaybePromise } from '../core/maybe-promise.js';
import { basePathOption, countOption, functionOption, loggerOption, objectWith, positiveInteger, storeOption } from '../core/option-schemas.js';
import { historyOptionsSchema, type HistoryOptions } from '../history/options.js';
import { checkTimeZone, QuotaCalendar } from './periods.js';
import { quotaDefaultsSchema, quotaRuleSchema, resolveRule, unsatisfiable, type QuotaDefaults, type QuotaRule, type RuleSource } from './rules.js';
import { indexRules } from './static-rules.js';
import { withStoredRules } from './stored-rules.js';
import { createMemoryQuotaStore } from './store/memory.js';
import type { QuotaStore } from './store/types.js';

/** Who is calling, as the guard learns it from the validated Bearer token; handed to the host's handler. */
export interface QuotaIdentity {
  /** The application (OAuth client_id): what quotas are counted per. */
  clientId: string;
  /** The user the token was issued for, when there is one. */
  sub?: string;
  /** Granted scopes. */
  scope: string[];
}

/**
 * Who is calling: resolved from the Bearer access token, or undefined when it is not valid. May
 * answer at once (the OAuth memory store does) or with a promise.
 */
export type TokenVerifier = (token: string) => MaybePromise<QuotaIdentity | undefined>;

export type OnStoreError = 'open' | 'closed';

export interface RuleCacheOptions {
  ttlMs: number;
  maxEntries: number;
}

/** Options of the quota (`courierPlatform({ quota })`); every one is documented in docs/options.md. */
export interface QuotaOptions {
  /** Where counters live: memory (default, one process), Redis or PostgreSQL. */
  store?: QuotaStore;
  /** Client and global rules, or a source that loads them (e.g. from a database). */
  rules?: readonly QuotaRule[] | RuleSource;
  /** IANA zone the minute, day and month are aligned to. Default `UTC`. */
  timeZone?: string;
  /** The system rule. Default 60 / minute, 1000 / day, month unlimited (0), cost 1. */
  defaults?: Partial<QuotaDefaults>;
  /** `'open'` (default): admit and count locally while the store is down; `'closed'`: answer 503. */
  onStoreError?: OnStoreError;
  /** Deadline of one store or rule-source call in ms. Default 1000. */
  storeTimeoutMs?: number;
  /**
   * How long what a rule source answered is kept per client and path (default 5000 ms; 0 asks
   * the source on every call), and for how many pairs at most (default 10,000).
   */
  ruleCache?: Partial<RuleCacheOptions>;
  /**
   * With `onStoreError: 'open'`, cap each client and path locally at its minute and day limits
   * while the store is away, from the counts the store last reported. Default true; false admits everything.
   */
  insurance?: boolean;
  /** Where get_quota answers. Default `/openapi/v1`. */
  basePath?: string;
  /** Resolves a Bearer token to the calling application; needed only when the platform's own OAuth server is off. */
  verifyToken?: TokenVerifier;
  /** Usage history per application and endpoint, by hour and day, in the quota store (docs/operator.md#usage-history); `false` switches it off. */
  history?: HistoryOptions | false;
}

/** Options of `createQuotaService()`: the quota's own, plus the clock and logger the platform would pass. */
export interface QuotaServiceOptions extends Omit<QuotaOptions, 'basePath' | 'verifyToken' | 'history'> {
  /** Time source (ms since the epoch). Default `Date.now`. */
  now?: Clock;
  /** Gets one warning per outage and one info when the store is back (a store that flaps: at most one of each a minute). Default: console. */
  logger?: Logger;
}

const timeZone = z.string().transform((zone, ctx) => {
  try {
    return checkTimeZone(zone);
  } catch {
    ctx.issues.push({ code: 'custom', message: `must be an IANA time zone such as "UTC" or "Europe/Berlin", got ${JSON.stringify(zone)}`, input: zone });
    return z.NEVER;
  }
});

const countingOptions = {
  store: storeOption<QuotaStore>(['consume', 'peek'], 'a quota store', { redis: 'createRedisQuotaStore', postgres: 'createPostgresQuotaStore' }).optional(),
  rules: z
    .union([z.array(quotaRuleSchema), objectWith<RuleSource>(['findRules'], 'a rule source')], {
      error: 'must be an array of rules or a rule source (with findRules())',
    })
    .optional(),
  timeZone: timeZone.default('UTC'),
  defaults: quotaDefaultsSchema,
  onStoreError: z.enum(['open', 'closed']).default('open'),
  storeTimeoutMs: positiveInteger.max(60_000).default(1000),
  ruleCache: z
    .strictObject({
      ttlMs: countOption.max(3_600_000).default(5000),
      maxEntries: positiveInteger.max(1_000_000).default(10_000),
    })
    .prefault({}),
  insurance: z.boolean().default(true),
};

/** `courierPlatform({ quota })`. */
export const quotaOptionsSchema = z.strictObject({
  ...countingOptions,
  basePath: basePathOption.default('/openapi/v1'),
  verifyToken: functionOption<TokenVerifier>().optional(),
  history: historyOptionsSchema,
});

/** `createQuotaService()`. */
export const quotaServiceOptionsSchema = z.strictObject({
  ...countingOptions,
  now: functionOption<Clock>('a function returning ms since the epoch').optional(),
  logger: loggerOption.optional(),
});

export type ParsedQuotaServiceOptions = z.output<typeof quotaServiceOptionsSchema>;

/**
 * Names what resets one client's counters of one path, as the log's instruction: the platform
 * names its admin API's `DELETE …/usage` where it answers (docs/operator.md#usage).
 */
export type CounterReset = (clientId: string, apiPath: string) => string;

/** Everything the quota service runs on, checked and with every default in place. */
export interface QuotaConfig {
  store: QuotaStore;
  /**
   * A configured list (indexed, answers at once) or the host's own source, with the store's
   * rules behind it when the store keeps some. `list`: the configured rules, when they are a list.
   */
  rules: { kind: 'static' | 'custom'; source: RuleSource; list?: readonly QuotaRule[] };
  calendar: QuotaCalendar;
  defaults: QuotaDefaults;
  onStoreError: OnStoreError;
  storeTimeoutMs: number;
  ruleCache: RuleCacheOptions;
  insurance: boolean;
  now: Clock;
  logger: Logger;
  /** What the log names to reset a damaged counter, when not the store's `usage.reset`: the platform's admin API (quota/damaged.ts). */
  counterReset?: CounterReset;
}

/**
 * The checks that span fields: two rules for the same endpoint, a cost no limit can admit.
 * @throws ConfigurationError naming the rule or `quota.defaults`
 */
export function resolveQuotaConfig(options: ParsedQuotaServiceOptions): QuotaConfig {
  const { defaults } = options;
  const impossible = unsatisfiable(resolveRule({}, '/', defaults));
  if (impossible) {
    throw configurationError('invalid_option', 'quota.defaults', `cost ${defaults.cost} exceeds the ${impossible} limit ${defaults[impossible]}, so no call could ever pass`);
  }
  let rules: QuotaConfig['rules'];
  if (Array.isArray(options.rules) || options.rules === undefined) {
    const list = (options.rules ?? []) as QuotaRule[];
    list.forEach((rule, i) => {
      const resolved = resolveRule({ global: rule }, rule.apiPath, defaults);
      const period = unsatisfiable(resolved);
      if (period) {
        throw configurationError('invalid_option', `quota.rules[${i}]`, `cost ${resolved.cost} exceeds the ${period} limit ${resolved.limits[period]}, so no call could ever pass`);
      }
    });
    rules = { kind: 'static', source: indexRules(list), list };
  } else {
    rules = { kind: 'custom', source: options.rules };
  }
  const store = options.store ?? createMemoryQuotaStore();
  if (store.rules) {
    // In process, stored rules change only here (and forgetRules() says when): still answered at once.
    const kind = rules.kind === 'static' && store.rules.inProcess ? 'static' : 'custom';
    rules = { ...rules, kind, source: withStoredRules(rules.source, store.rules) };
  }
  return {
    store,
    rules,
    calendar: new QuotaCalendar(options.timeZone),
    defaults,
    onStoreError: options.onStoreError,
    storeTimeoutMs: options.storeTimeoutMs,
    ruleCache: options.ruleCache,
    insurance: options.insurance,
    now: options.now ?? systemClock,
    logger: safeLogger(options.logger ?? consoleLogger),
  };
}
