/**
 * The quota service: everything of the quota except HTTP. The guard (`platform.quota()`) and
 * get_quota call it with a client id (from a validated access token) and a path; it resolves the
 * rule, computes the calendar buckets, asks the store, and answers a decision the guard renders.
 *
 * Store failures never escape: `onStoreError: 'open'` admits through the insurance limiter,
 * `'closed'` answers `store_unavailable` (503). Each call of a store that answers with a promise
 * has a deadline (an in-process `consumeSync` needs none). The next call always tries the store
 * again: recovery needs nothing but the store coming back.
 */
import { configurationError } from '../core/errors.js';
import { isThenable, type MaybePromise } from '../core/maybe-promise.js';
import { parseConfig } from '../core/validation.js';
import { asDependencyError, withDeadline } from './deadline.js';
import { decide, bucketOf, type DecisionBase, type QuotaDecision } from './decision.js';
import { quotaEvents, type EmitQuotaEvent } from './events.js';
import type { QuotaStoreError, QuotaStoreTimeoutError } from './errors.js';
import { createInsuranceLimiter } from './insurance.js';
import { quotaServiceOptionsSchema, resolveQuotaConfig, type OnStoreError, type QuotaConfig, type QuotaServiceOptions } from './options.js';
import { createOutageLog } from './outage-log.js';
import type { QuotaCalendar } from './periods.js';
import { quotaReport, type QuotaInspection } from './report.js';
import { createRuleLookup } from './rule-lookup.js';
import { resolveRule, type ResolvedQuotaRule } from './rules.js';
import type { ConsumeRequest, ConsumeResult, QuotaBucket, QuotaStore } from './store/types.js';

export interface QuotaService {
  /**
   * Charges the endpoint's cost from every period, or nothing. Answers at once (no promise) when
   * the rules and the store are in process (a rule list, the memory store); await it either way.
   * Never fails for a store failure. Rejects (never throws) with BadRequestError for a malformed path.
   */
  consume(clientId: string, apiPath: string): MaybePromise<QuotaDecision>;
  /** What get_quota answers. Charges nothing. Never throws for a store failure. @throws BadRequestError for a malformed path. */
  inspect(clientId: string, apiPath: string): Promise<QuotaInspection>;
  /** The rule in force for a client and path (client > global > system). Throws when the rule source fails. */
  resolveRule(clientId: string, apiPath: string): Promise<ResolvedQuotaRule>;
  readonly store: QuotaStore;
  readonly calendar: QuotaCalendar;
  readonly onStoreError: OnStoreError;
  /** True while the last store call failed. */
  readonly degraded: boolean;
  /** Stored rules changed through this process (the admin API): the next calls read them afresh. */
  forgetRules(): void;
}

/** The guard passes the token's client_id; an empty one is a bug in the caller, not a client's mistake. */
function checkClientId(clientId: string): void {
  if (typeof clientId !== 'string' || clientId === '') {
    throw configurationError('invalid_argument', 'clientId', "must be a non-empty string (the access token's client_id)");
  }
}

/**
 * @example
 * import { Redis } from 'ioredis';
 * import { createQuotaService, createRedisQuotaStore, guardVerdict } from 'courier-platform';
 *
 * const quota = createQuotaService({
 *   store: createRedisQuotaStore({ client: new Redis() }),
 *   rules: [{ scope: 'global', apiPath: '/openapi/v1/orders', minute: 10 }],
 *   timeZone: 'Asia/Shanghai',
 * });
 * const verdict = guardVerdict(await quota.consume('partner-app', '/openapi/v1/orders'));
 * if (!verdict.pass) console.log(verdict.response.status); // 429 or 503
 * @throws ConfigurationError (a TypeError) naming the option, exactly as `courierPlatform({ quota })` would.
 */
export function createQuotaService(options: QuotaServiceOptions = {}): QuotaService {
  return buildQuotaService(resolveQuotaConfig(parseConfig(quotaServiceOptionsSchema, options, 'invalid_option', 'quota')));
}

/** The service over a checked configuration. */
export function buildQuotaService(config: QuotaConfig, emit?: EmitQuotaEvent): QuotaService {
  const { store, calendar, onStoreError, storeTimeoutMs, defaults } = config;
  const rules = createRuleLookup(config);
  const outage = createOutageLog(config.logger, store.kind, onStoreError);
  const insurance = createInsuranceLimiter(config.insurance, calendar);
  /** Whole ms: bucket starts are keys, and a fractional clock must not make every call a new key. */
  const readClock = (): number => Math.floor(config.now());

  const onFailure = (base: DecisionBase, error: QuotaStoreError | QuotaStoreTimeoutError, rule: ResolvedQuotaRule | undefined): MaybePromise<QuotaDecision> => {
    outage.failed(error, base.now);
    if (onStoreError === 'closed') return { ...base, outcome: 'store_unavailable', admitted: false, rule, error };
    return insurance.decide(base, rule ?? resolveRule({}, base.apiPath, defaults));
  };

  const decided = (request: ConsumeRequest, rule: ResolvedQuotaRule, result: ConsumeResult): QuotaDecision => {
    outage.worked(request.now);
    insurance.remember(request, result.used);
    if (emit) for (const event of quotaEvents(request, result)) emit(event);
    return decide(request, rule, result);
  };

  /** Asks the store; synchronous when the store offers `consumeSync` (memory). */
  const charge = (clientId: string, apiPath: string, now: number, rule: ResolvedQuotaRule): MaybePromise<QuotaDecision> => {
    const windows = calendar.windows(now);
    const buckets: QuotaBucket[] = [bucketOf(windows[0], rule), bucketOf(windows[1], rule), bucketOf(windows[2], rule)];
    const request: ConsumeRequest = { clientId, apiPath, cost: rule.cost, buckets, now };
    if (store.consumeSync) {
      let result: ConsumeResult;
      try {
        result = store.consumeSync(request);
      } catch (error) {
        return onFailure({ clientId, apiPath, now }, asDependencyError('store', error), rule);
      }
      return decided(request, rule, result);
    }
    return withDeadline('store', storeTimeoutMs, () => store.consume(request)).then(
      (result) => decided(request, rule, result),
      (error: unknown) => onFailure({ clientId, apiPath, now }, asDependencyError('store', error), rule),
    );
  };

  /** `consume` without its guard rail: may throw for a malformed path or a bad clock. */
  const consumeNow = (clientId: string, rawPath: string): MaybePromise<QuotaDecision> => {
    const apiPath = rules.normalizedPath(rawPath);
    checkClientId(clientId);
    const now = readClock();
    let found: ResolvedQuotaRule | Promise<ResolvedQuotaRule>;
    try {
      found = rules.find(clientId, apiPath);
    } catch (error) {
      return onFailure({ clientId, apiPath, now }, asDependencyError('rules', error), rules.lastKnown(clientId, apiPath));
    }
    if (!isThenable(found)) return charge(clientId, apiPath, now, found);
    return found.then(
      (rule) => charge(clientId, apiPath, now, rule),
      (error: unknown) => onFailure({ clientId, apiPath, now }, asDependencyError('rules', error), rules.lastKnown(clientId, apiPath)),
    );
  };

  return {
    store,
    calendar,
    onStoreError,
    get degraded() {
      return outage.degraded;
    },

    async resolveRule(clientId, apiPath) {
      return rules.find(clientId, rules.normalizedPath(apiPath));
    },

    forgetRules: () => rules.forget(),

    consume(clientId, rawPath) {
      // Whatever goes wrong here (a malformed path, a clock that answers NaN) is a rejection, never
      // a synchronous throw: awaiting the answer is enough to see every failure.
      try {
        return consumeNow(clientId, rawPath);
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async inspect(clientId, rawPath) {
      const apiPath = rules.normalizedPath(rawPath);
      checkClientId(clientId);
      const now = readClock();
      const time = new Date(now).toISOString();
      const windows = calendar.windows(now);
      let rule: ResolvedQuotaRule;
      try {
        rule = await rules.find(clientId, apiPath);
      } catch (error) {
        const failure = asDependencyError('rules', error);
        outage.failed(failure, now);
        return { outcome: 'store_unavailable', apiPath, now, time, error: failure };
      }
      let used: number[];
      try {
        used = await withDeadline('store', storeTimeoutMs, () => store.peek({ clientId, apiPath, buckets: windows, now }));
      } catch (error) {
        const failure = asDependencyError('store', error);
        outage.failed(failure, now);
        return { outcome: 'store_unavailable', apiPath, now, time, error: failure };
      }
      outage.worked(now);
      return { outcome: 'ok', now, time, report: quotaReport(apiPath, rule, windows, used) };
    },
  };
}
