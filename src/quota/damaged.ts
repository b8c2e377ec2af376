/**
 * Damaged data the quota's stores answer is not an outage (docs/quota.md#damaged-data): the store
 * answered. A rule source's invalid rule (rule-lookup.ts) and a counter the store cannot count on
 * (service.ts) are treated alike: their calls are answered as when the store fails
 * (`onStoreError`), and the log names what is damaged and how to repair it once an hour for each
 * damaged thing, for as long as calls meet it, so a damaged record cannot fill the log.
 */
import { BoundedCache } from '../core/cache.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { StoreDataError } from '../core/store-errors.js';
import type { CounterReset, OnStoreError } from './options.js';
import type { QuotaStore } from './store/types.js';

/** Damaged data is logged again after this long, if calls still meet it. */
export const DAMAGE_REPORT_MS = 3_600_000;
/** Damaged things remembered as logged at most; past it the least recently met go first. */
const MAX_REMEMBERED = 10_000;

/**
 * Lines one report writes per DAMAGE_REPORT_MS at most, whatever the damaged things: a rule
 * source that answers badly for every path of a family makes each path a new one, and callers
 * choose the paths.
 */
export const MAX_DAMAGE_REPORTS = 20;

/** Runs `log` at most once per DAMAGE_REPORT_MS for each `key`, and at most MAX_DAMAGE_REPORTS times in that long. */
export type DamageReport = (key: string, log: () => void) => void;

export function damageReport(now: Clock, logger: Logger, what: string): DamageReport {
  const reported = new BoundedCache<string, true>({ max: MAX_REMEMBERED, now });
  let windowStart = Number.NEGATIVE_INFINITY;
  let lines = 0;
  return (key, log) => {
    if (reported.get(key)) return;
    reported.set(key, true, DAMAGE_REPORT_MS);
    const at = now();
    if (at - windowStart >= DAMAGE_REPORT_MS) {
      windowStart = at;
      lines = 0;
    }
    lines++;
    if (lines <= MAX_DAMAGE_REPORTS) log();
    else if (lines === MAX_DAMAGE_REPORTS + 1) {
      logger.warn({ resumesInMs: windowStart + DAMAGE_REPORT_MS - at }, `quota: more than ${MAX_DAMAGE_REPORTS} ${what} within the hour; no more are logged until it is over`);
    }
  };
}

/** How the calls that meet damaged data are answered, for the log. */
function answeredMeanwhile(config: { onStoreError: OnStoreError; insurance: boolean }): string {
  return config.onStoreError === 'closed' ? 'answered 503 (onStoreError: closed)'
    : config.insurance ? 'admitted under the local insurance limit (onStoreError: open)'
    : 'admitted (onStoreError: open, insurance: false)';
}

/**
 * A counter of one client and path that the store answers with a data error (a Redis key of the
 * wrong type, a PostgreSQL count out of range): one warning an hour per client and path, naming
 * them and what deletes the damaged counters: `reset` (the admin API's), else the store's own
 * `usage.reset` (docs/quota.md#damaged-data).
 */
export function damagedCounters(config: { logger: Logger; now: Clock; onStoreError: OnStoreError; insurance: boolean; store: QuotaStore; reset?: CounterReset | undefined }) {
  const report = damageReport(config.now, config.logger, 'damaged counters');
  const meanwhile = answeredMeanwhile(config);
  const repair = (clientId: string, apiPath: string): string => {
    if (config.reset) return `${config.reset(clientId, apiPath)} resets its counters`;
    if (config.store.usage) return `the quota store's usage.reset(${JSON.stringify(clientId)}, ${JSON.stringify(apiPath)}) resets its counters`;
    return 'its period ends (the quota store has no usage.reset to delete its counters sooner)';
  };
  return (clientId: string, apiPath: string, error: StoreDataError): void =>
    report(`${encodeURIComponent(clientId)} ${apiPath}`, () => {
      config.logger.warn(
        { store: config.store.kind, clientId, apiPath, err: error },
        `quota: a counter of ${JSON.stringify(clientId)} on ${apiPath} is damaged, the quota store cannot count its calls: they are ${meanwhile}, no outage, until ${repair(clientId, apiPath)}`,
      );
    });
}

/**
 * A rule source that answers with a data error (StoreDataError: the Redis store's rules key
 * replaced by a key of another type): the store answered, so no outage. One warning an hour per
 * error, naming it (the store's error names the key and how to repair it), and how the calls are
 * answered until then: as when the rule source fails, under the rule last read for their client
 * and path, or the defaults (docs/quota.md#damaged-data).
 */
export function damagedRuleSource(config: { logger: Logger; now: Clock; onStoreError: OnStoreError; insurance: boolean }) {
  const report = damageReport(config.now, config.logger, 'damaged rule sources');
  const meanwhile = answeredMeanwhile(config);
  const under = config.onStoreError === 'open' && config.insurance ? ', under the rule last read for their client and endpoint or the defaults' : '';
  return (clientId: string, apiPath: string, error: StoreDataError): void =>
    report(error.message, () => {
      config.logger.warn(
        { clientId, apiPath, err: error },
        `quota: the rule source cannot be read: ${error.message}; the calls that need a rule from it are ${meanwhile}${under}, no outage, until it is repaired`,
      );
    });
}
