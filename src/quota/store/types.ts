/**
 * The one contract every quota store keeps (memory, Redis, PostgreSQL), checked by one shared
 * conformance suite (test/quota/store-conformance.ts).
 *
 * A counter is identified by (clientId, apiPath, period, bucket start). Stores know nothing of
 * rules or time zones: the service hands them the buckets of the current call, already computed.
 */
import { configurationError } from '../../core/errors.js';
import type { UsageHistoryStore } from '../../history/types.js';
import type { StoreConnection } from '../../core/store-connection.js';
import { storedJson } from '../../core/stored-json.js';
import type { StoreCall } from '../../core/store-guard.js';
import type { QuotaPeriod } from '../periods.js';
import { MAX_COST, MAX_LIMIT, type MatchedRules, type QuotaRule, type QuotaRuleKey } from '../rules.js';

export type { QuotaRuleKey };

/**
 * The quota store's name in the store guard, its log lines and a pool's local queue: the queue
 * sheds the store's waiting calls by it when the guard finds the store failing (docs/stores.md).
 */
export const QUOTA_STORE_NAME = 'quota store';

/** One period's counter for the current call. */
export interface QuotaBucket {
  period: QuotaPeriod;
  /** Start of the period, UTC ms: part of the counter's key. */
  start: number;
  /** End of the period, UTC ms: the counter may be forgotten from then on. */
  end: number;
  /** 0 = unlimited (the counter still counts); at most MAX_LIMIT. */
  limit: number;
}

export interface ConsumeRequest {
  clientId: string;
  /** Normalised path. */
  apiPath: string;
  /** Units to take from every bucket; an integer from 0 to MAX_COST. */
  cost: number;
  /** At most one bucket per period, periods distinct. */
  buckets: readonly QuotaBucket[];
  /** The service clock's now, UTC ms: used for expiry and clean-up, never to pick buckets. */
  now: number;
}

export interface ConsumeResult {
  /** True when every limited bucket had room for `cost`; then every bucket was charged. */
  admitted: boolean;
  /** Per bucket, same order as the request: the count after this call (unchanged when rejected). */
  used: number[];
}

export interface PeekRequest {
  clientId: string;
  apiPath: string;
  buckets: readonly Pick<QuotaBucket, 'period' | 'start' | 'end'>[];
  now: number;
}

/**
 * @example A store is a plain object; the service is what the wiring talks to.
 * const service = createQuotaService({ store: createRedisQuotaStore({ client: new Redis(url) }) });
 */
export interface QuotaStore {
  /** `memory`, `redis`, `postgres`, ...: shown in logs. */
  readonly kind: string;
  /**
   * The one atomic operation: if every bucket with a limit has room for `cost`
   * (`used + cost <= limit`), add `cost` to all buckets (unlimited ones too); otherwise change
   * nothing. Exact under any concurrency, including many processes on one shared store.
   * Rejects (throws) only when the store itself fails.
   *
   * `call`, when given, hears when the call waits locally and when it goes to the store, so its
   * deadline measures the store (a store that queues calls itself, as the PostgreSQL store's
   * batches do, says so with `queuesCalls`); other stores ignore it.
   */
  consume(request: ConsumeRequest, call?: StoreCall): Promise<ConsumeResult>;
  /** True when `consume` queues calls itself and reports them through its `call` argument. */
  readonly queuesCalls?: boolean;
  /**
   * Optional: the same operation answered synchronously, for a store that lives in this process
   * and cannot hang (memory). The service then calls it instead, with no deadline timer and no
   * promise, so the guard decides within the tick. Throws only when the store itself fails.
   */
  consumeSync?(request: ConsumeRequest): ConsumeResult;
  /** Current counts per bucket, same order; 0 for a bucket never charged. Never writes a count. */
  peek(request: PeekRequest): Promise<number[]>;
  /** The client it talks through: `ready()` warms it, and its pool's lane queues the calls. */
  readonly connection?: StoreConnection;
  /** Optional: what the first call would otherwise do (a migration), run by `ready()`. */
  prepare?(): Promise<void>;
  /** Releases what the store itself started (timers, clean-ups in flight); never the client it was given. */
  close?(): Promise<void>;
  /** Rules kept in the store beside the configured ones, for the admin API; every process on the store reads them. */
  readonly rules?: QuotaRuleStore;
  /** What an application used, for the admin API. */
  readonly usage?: QuotaUsageStore;
  /** Usage history by hour and day, beside the counters (docs/operator.md#usage-history). */
  readonly history?: UsageHistoryStore;
}

/**
 * The admin API's view of the counters (docs/operator.md#usage): not on the guard's path, so a
 * scan is acceptable here.
 */
export interface QuotaUsageStore {
  /**
   * The paths the client has a live counter for (one whose bucket has not ended at `now`), in any
   * order: the admin API sorts them. A store that needs many round trips (a SCAN) tells `call`
   * as each is answered (StoreCall.answered).
   */
  paths(clientId: string, now: number, call?: StoreCall): Promise<string[]>;
  /** Forgets the client's counters, of one path or of all; answers how many paths had some. `call` as for `paths`. */
  reset(clientId: string, apiPath?: string, call?: StoreCall): Promise<number>;
}

/** A rule as a store read it back (storedJson): checked before any use, as it may not be one. */
export const storedRule = (value: unknown): QuotaRule => storedJson(value) as QuotaRule;

/** A stored rule as listed: the key it is filed under and what is kept there, checked before any use. */
export interface StoredRuleEntry {
  key: QuotaRuleKey;
  rule: unknown;
}

/**
 * Rules kept in a quota store (docs/operator.md#quota-rules). They are checked before they are
 * saved; `findRules` is a RuleSource that the service asks behind its rule cache.
 */
export interface QuotaRuleStore {
  /** Lives in this process: answers at once, and only this process changes it. */
  readonly inProcess: boolean;
  findRules(clientId: string, apiPath: string): MatchedRules | Promise<MatchedRules>;
  /** Every stored entry with the key it is filed under, whatever is kept there (a record written around the admin API may be no rule). */
  listRules(): Promise<StoredRuleEntry[]>;
  /** Inserts or replaces the rule with the same key. */
  saveRule(rule: QuotaRule): Promise<void>;
  /** True when there was one. */
  deleteRule(key: QuotaRuleKey): Promise<boolean>;
}

/** A rule's key as one string: JSON of its parts, unambiguous whatever characters they hold. */
export function ruleKey(key: QuotaRuleKey): string {
  return JSON.stringify([key.scope, key.scope === 'client' ? (key.clientId ?? '') : '', key.apiPath]);
}

/**
 * A store's stored rules, from (key text, stored value) pairs, as `listRules` answers them: an
 * entry under a key `ruleKey` never spells is left out, as no lookup finds it.
 */
export function storedRuleEntries(pairs: Iterable<readonly [string, unknown]>): StoredRuleEntry[] {
  const entries: StoredRuleEntry[] = [];
  for (const [text, value] of pairs) {
    const key = ruleKeyOf(text);
    if (key) entries.push({ key, rule: storedRule(value) });
  }
  return entries;
}

/**
 * The key `ruleKey` spelt, read back (a stored rule's key). Undefined for any other text, even
 * JSON of the same parts spelt otherwise: no lookup asks for such a key, so nothing filed under
 * it applies.
 */
export function ruleKeyOf(text: string): QuotaRuleKey | undefined {
  const parsed = storedJson(text);
  if (!Array.isArray(parsed) || parsed.length !== 3 || !parsed.every((part) => typeof part === 'string')) return undefined;
  const [scope, clientId, apiPath] = parsed as [string, string, string];
  const key: QuotaRuleKey | undefined = scope === 'client' ? { scope, clientId, apiPath } : scope === 'global' ? { scope, apiPath } : undefined;
  return key && ruleKey(key) === text ? key : undefined;
}

/** The periods of a rejected call whose limit `cost` would cross, in request order. */
export function exhaustedPeriods(buckets: readonly QuotaBucket[], used: readonly number[], cost: number): QuotaPeriod[] {
  const out: QuotaPeriod[] = [];
  buckets.forEach((bucket, i) => {
    if (bucket.limit > 0 && (used[i] ?? 0) + cost > bucket.limit) out.push(bucket.period);
  });
  return out;
}

/** Checks what every store relies on; a bad request is a programming error, not a store failure. */
export function checkConsumeRequest(request: ConsumeRequest): void {
  if (!Number.isSafeInteger(request.cost) || request.cost < 0 || request.cost > MAX_COST) throw configurationError('invalid_argument', 'cost', `must be an integer from 0 to ${MAX_COST}, got ${request.cost}`);
  const { buckets } = request;
  for (let i = 0; i < buckets.length; i++) {
    const bucket = buckets[i] as QuotaBucket;
    // A handful of buckets: a nested scan is cheaper than a Set on every guarded call.
    for (let j = 0; j < i; j++) if ((buckets[j] as QuotaBucket).period === bucket.period) throw configurationError('invalid_argument', `buckets[${i}]`, `gives the period ${bucket.period} twice`);
    if (!Number.isSafeInteger(bucket.limit) || bucket.limit < 0 || bucket.limit > MAX_LIMIT) throw configurationError('invalid_argument', `buckets[${i}].limit`, `must be an integer from 0 to ${MAX_LIMIT}, got ${bucket.limit}`);
    if (!(bucket.end > bucket.start)) throw configurationError('invalid_argument', `buckets[${i}]`, `the ${bucket.period} bucket ends before it starts`);
  }
}
