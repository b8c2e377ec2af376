/**
 * The quota service: everything of the quota except HTTP. The guard (`platform.quota()`) and
 * get_quota call it with a client id (from a validated access token) and a path; it resolves the
 * rule, computes the calendar buckets, asks the store, and answers a decision the guard renders.
 *
 * Store failures never escape: `onStoreError: 'open'` admits through the insurance limiter,
 * `'closed'` answers `store_unavailable` (503). Every call of a store that answers with a promise
 * runs through the store guard (core/store-guard.ts: its deadline, the local queue, one warning
 * per outage); an in-process `consumeSync` needs none. A store that is only slow still decides:
 * the insurance limiter takes over only once it is really failing (docs/quota.md#when-the-store-is-slow-or-down).
 * The next call always tries the store again: recovery needs nothing but the store coming back.
 * A counter the store answers a data error about (StoreDataError) is no outage: its client and
 * path are answered as when the store fails, and named in the log once an hour (damaged.ts).
 */
import { configurationError } from '../core/errors.js';
import { isThenable, type MaybePromise } from '../core/maybe-promise.js';
import { START_DEADLINE_MS } from '../core/store-connection.js';
import { StoreBusyError, StoreDataError, StoreTimeoutError } from '../core/store-errors.js';
import { createStoreGuard, type StoreGuard } from '../core/store-guard.js';
import { parseConfig } from '../core/validation.js';
import { decide, bucketOf, type DecisionBase, type QuotaDecision } from './decision.js';
import { damagedCounters } from './damaged.js';
import { quotaEvents, type EmitQuotaEvent } from './events.js';
import { asDependencyError, QuotaStoreError, type QuotaFailure } from './errors.js';
import { createInsuranceLimiter } from './insurance.js';
import { quotaServiceOptionsSchema, resolveQuotaConfig, type OnStoreError, type QuotaConfig, type QuotaServiceOptions } from './options.js';
import type { QuotaCalendar } from './periods.js';
import { quotaReport, type QuotaInspection } from './report.js';
import { createRuleLookup } from './rule-lookup.js';
import { resolveRule, type ResolvedQuotaRule } from './rules.js';
import { QUOTA_STORE_NAME, type ConsumeRequest, type ConsumeResult, type QuotaBucket, type QuotaStore } from './store/types.js';

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
  /** True from the failure that started a store outage until the store answers again. */
  readonly degraded: boolean;
  /** The store's deadline, local queue and outage log: the admin API's store calls run through it too. */
  readonly storeGuard: StoreGuard;
  /**
   * Opens the store's connections (or waits for a connecting client) within the start deadline,
   * and runs what its first call would (a migration). Rejects with a QuotaStoreError naming the
   * store's address and the error when it cannot.
   */
  ready(): Promise<void>;
  /** Stored rules changed through this process (the admin API): the next calls read them afresh. */
  forgetRules(): void;
  /**
   * Counters reset through this process (the admin API): the insurance limit starts again from
   * the store's next counts instead of those it reported before the reset.
   */
  forgetCounts(clientId: string, apiPath?: string): void;
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

const noop = (): void => {};

/**
 * The service over a checked configuration. `storeError` hears every failed store call (the
 * metrics), the admin API's included.
 */
export function buildQuotaService(config: QuotaConfig, emit?: EmitQuotaEvent, storeError?: () => void): QuotaService {
  const { store, calendar, onStoreError, storeTimeoutMs, defaults } = config;
  const guard = createStoreGuard({
    name: QUOTA_STORE_NAME,
    timeoutMs: storeTimeoutMs,
    logger: config.logger,
    ...(storeError ? { onError: storeError } : {}),
    ...(store.connection?.lane ? { lane: store.connection.lane } : {}),
    meanwhile:
      onStoreError === 'open'
        ? 'admitting calls under the local insurance limit until it is back (onStoreError: open)'
        : 'answering 503 until it is back (onStoreError: closed)',
    fields: { store: store.kind },
    now: config.now,
  });
  const rules = createRuleLookup(config, guard);
  const insurance = createInsuranceLimiter(config.insurance, calendar);
  const damaged = damagedCounters({ logger: config.logger, now: config.now, onStoreError, insurance: config.insurance, store, reset: config.counterReset });
  /** Whole ms: bucket starts are keys, and a fractional clock must not make every call a new key. */
  const readClock = (): number => Math.floor(config.now());

  const onFailure = (base: DecisionBase, error: QuotaFailure, rule: ResolvedQuotaRule | undefined): MaybePromise<QuotaDecision> => {
    // A call the local queue shed is load, not an outage: the insurance limiter is for a store that is away.
    const shed = error instanceof StoreBusyError && !guard.degraded;
    if (onStoreError === 'closed' || shed) return { ...base, outcome: 'store_unavailable', admitted: false, rule, error };
    return insurance.decide(base, rule ?? resolveRule({}, base.apiPath, defaults));
  };
  const storeFailed = (base: DecisionBase, error: unknown, rule: ResolvedQuotaRule): MaybePromise<QuotaDecision> => {
    if (error instanceof StoreDataError) damaged(base.clientId, base.apiPath, error);
    return onFailure(base, asDependencyError('store', error), rule);
  };

  const decided = (request: ConsumeRequest, rule: ResolvedQuotaRule, result: ConsumeResult): QuotaDecision => {
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
        return storeFailed({ clientId, apiPath, now }, guard.failedNow(error), rule);
      }
      guard.succeededNow();
      return decided(request, rule, result);
    }
    let sent: Promise<ConsumeResult> | undefined;
    return guard.ask((call) => (sent = store.consume(request, call)), { queued: store.queuesCalls === true }).then(
      (result) => decided(request, rule, result),
      (error: unknown) => {
        if (error instanceof StoreTimeoutError && sent) {
          // No answer: the store may have counted the call, so the insurance limiter does too, until the answer comes.
          insurance.unanswered(request);
          sent.then((late) => insurance.answeredLate(request, late.used), noop);
        }
        return storeFailed({ clientId, apiPath, now }, error, rule);
      },
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
    storeGuard: guard,
    get degraded() {
      return guard.degraded;
    },

    async ready() {
      try {
        await store.connection?.warm(START_DEADLINE_MS);
        await store.prepare?.();
      } catch (error) {
        throw new QuotaStoreError('store', error);
      }
    },

    async resolveRule(clientId, apiPath) {
      return rules.find(clientId, rules.normalizedPath(apiPath));
    },

    forgetRules: () => rules.forget(),
    forgetCounts: (clientId, apiPath) => insurance.forget(clientId, apiPath),

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
        return { outcome: 'store_unavailable', apiPath, now, time, error: asDependencyError('rules', error) };
      }
      let used: number[];
      try {
        used = await guard.ask(() => store.peek({ clientId, apiPath, buckets: windows, now }));
      } catch (error) {
        return { outcome: 'store_unavailable', apiPath, now, time, error: asDependencyError('store', error) };
      }
      return { outcome: 'ok', now, time, report: quotaReport(apiPath, rule, windows, used) };
    },
  };
}
