/**
 * Quota counters in process memory: the default store, exact within one process.
 *
 * The check of every bucket and the increment of every bucket happen in one synchronous step
 * (no `await` in between), so no other call can interleave: that is the whole atomicity story.
 *
 * Expiry is by timestamps, never timers: a counter is dropped once its bucket ended (plus a short
 * grace, as in the Redis and PostgreSQL stores) and is swept later. (A month is longer than the
 * ~24.8 days a Node timer can wait, which is one of the reasons the counters are not built on
 * rate-limiter-flexible's memory store.) The sweep is
 * amortised: every call examines a few slots through a persistent Map iterator, more than a
 * call can create, so expired counters never pile up and no call ever pays for a full scan.
 *
 * One slot per client and path holds that pair's counters (one per period and bucket), so a
 * guarded call looks up one slot, not one counter per period.
 */
import { configurationError } from '../../core/errors.js';
import { PairCache } from '../../core/cache.js';
import { createMemoryHistoryStore } from '../../history/memory.js';
import type { QuotaRule } from '../rules.js';
import { checkConsumeRequest, ruleKey, storedRuleEntries, type ConsumeRequest, type ConsumeResult, type PeekRequest, type QuotaBucket, type QuotaStore } from './types.js';

export interface MemoryQuotaStoreOptions {
  /** Slots (client + path) examined by the sweep per call (default 8; at least 2, more than the one a call can create). */
  sweepPerCall?: number;
  /**
   * A counter is kept this long after its bucket's end (ms, default 5000, as in the Redis and
   * PostgreSQL stores), so a clock that steps back a little finds the count instead of starting over.
   */
  expiryGraceMs?: number;
}

export interface MemoryQuotaStore extends QuotaStore {
  readonly kind: 'memory';
  consumeSync(request: ConsumeRequest): ConsumeResult;
  /** Counters held, expired ones not yet swept included. */
  readonly size: number;
  /** Drops every counter whose bucket ended more than the grace before `now`; returns how many. */
  sweep(now: number): number;
  /** Forgets every counter. */
  clear(): void;
  /** Forgets every counter (there is nothing else to release). */
  close(): Promise<void>;
}

interface Counter {
  period: string;
  /** Bucket start and end, UTC ms. */
  start: number;
  end: number;
  used: number;
}

interface Slot {
  counters: Counter[];
  /** The latest end among the counters: once it has passed, the whole slot can go. */
  end: number;
}

/** Length-prefixed, so no client id and path can make another pair's key. */
function slotKey(clientId: string, apiPath: string): string {
  return `${apiPath.length}:${apiPath}${clientId}`;
}

/** Keys of pairs seen lately: a guarded call then looks its slot up by a string whose hash V8 already knows. */
const KEYS_REMEMBERED = 10_000;

function pairOf(key: string): { clientId: string; apiPath: string } {
  const colon = key.indexOf(':');
  const end = colon + 1 + Number(key.slice(0, colon));
  return { apiPath: key.slice(colon + 1, end), clientId: key.slice(end) };
}

/**
 * @example
 * const service = createQuotaService({ store: createMemoryQuotaStore() }); // also the default
 */
export function createMemoryQuotaStore(options: MemoryQuotaStoreOptions = {}): MemoryQuotaStore {
  const sweepPerCall = options.sweepPerCall ?? 8;
  if (!Number.isSafeInteger(sweepPerCall) || sweepPerCall < 2) throw configurationError('invalid_option', 'sweepPerCall', 'must be an integer >= 2');
  const grace = options.expiryGraceMs ?? 5000;
  if (!Number.isSafeInteger(grace) || grace < 0) throw configurationError('invalid_option', 'expiryGraceMs', 'must be a non-negative integer');
  const slots = new Map<string, Slot>();
  const keys = new PairCache<string>({ max: KEYS_REMEMBERED });
  const keyOf = (clientId: string, apiPath: string): string => {
    let key = keys.get(clientId, apiPath);
    if (key === undefined) keys.set(clientId, apiPath, (key = slotKey(clientId, apiPath)));
    return key;
  };
  let size = 0;
  let cursor: Iterator<[string, Slot]> | undefined;

  /** Examines up to `budget` slots from where the last call stopped; deletes those whose counters all ended. */
  const sweepSome = (now: number, budget: number): void => {
    // Never more than one lap: with few slots, wrapping around would only build new iterators
    // (the step that reaches the end of the Map examines nothing; few slots need little sweeping).
    const examine = Math.min(budget, slots.size);
    for (let i = 0; i < examine; i++) {
      cursor ??= slots.entries();
      const next = cursor.next();
      if (next.done) {
        cursor = undefined;
        continue;
      }
      const [key, slot] = next.value;
      // Deleting the entry the iterator just returned is safe for Map iteration.
      if (slot.end + grace <= now) {
        slots.delete(key);
        size -= slot.counters.length;
      }
    }
  };

  /** The slot, without the counters that ended more than the grace ago (dropped as they are met). */
  const liveSlot = (key: string, now: number): Slot | undefined => {
    const slot = slots.get(key);
    if (slot === undefined) return undefined;
    const cutoff = now - grace;
    let stale = false;
    for (const counter of slot.counters) if (counter.end <= cutoff) stale = true;
    if (stale) {
      const live = slot.counters.filter((counter) => counter.end > cutoff);
      size -= slot.counters.length - live.length;
      slot.counters = live;
    }
    return slot;
  };

  const find = (slot: Slot | undefined, period: string, start: number): Counter | undefined => {
    if (slot === undefined) return undefined;
    for (const counter of slot.counters) if (counter.period === period && counter.start === start) return counter;
    return undefined;
  };

  const rules = new Map<string, QuotaRule>();
  const store: MemoryQuotaStore = {
    kind: 'memory',
    history: createMemoryHistoryStore(),
    usage: {
      async paths(clientId, now) {
        const found: string[] = [];
        for (const [key, slot] of slots) {
          const pair = pairOf(key);
          if (pair.clientId === clientId && slot.counters.some((counter) => counter.end > now)) found.push(pair.apiPath);
        }
        return found;
      },
      async reset(clientId, apiPath) {
        let count = 0;
        for (const [key, slot] of slots) {
          const pair = pairOf(key);
          if (pair.clientId !== clientId || (apiPath !== undefined && pair.apiPath !== apiPath)) continue;
          slots.delete(key);
          size -= slot.counters.length;
          count += 1;
        }
        return count;
      },
    },
    rules: {
      inProcess: true,
      findRules: (clientId, apiPath) => {
        const client = rules.get(ruleKey({ scope: 'client', clientId, apiPath }));
        const global = rules.get(ruleKey({ scope: 'global', apiPath }));
        return { ...(client ? { client } : {}), ...(global ? { global } : {}) };
      },
      listRules: async () => storedRuleEntries(rules),
      saveRule: async (rule) => {
        rules.set(ruleKey(rule), Object.freeze({ ...rule }));
      },
      deleteRule: async (key) => rules.delete(ruleKey(key)),
    },
    get size() {
      return size;
    },
    async consume(request: ConsumeRequest): Promise<ConsumeResult> {
      return store.consumeSync(request);
    },
    // Runs to completion without yielding: that is what makes it atomic.
    consumeSync(request: ConsumeRequest): ConsumeResult {
      checkConsumeRequest(request);
      const { clientId, apiPath, cost, buckets, now } = request;
      sweepSome(now, sweepPerCall);
      const key = keyOf(clientId, apiPath);
      let slot = liveSlot(key, now);
      const current: (Counter | undefined)[] = [];
      const used: number[] = [];
      let admitted = true;
      for (let i = 0; i < buckets.length; i++) {
        const bucket = buckets[i] as QuotaBucket;
        const counter = find(slot, bucket.period, bucket.start);
        const count = counter === undefined ? 0 : counter.used;
        current.push(counter);
        used.push(count);
        if (bucket.limit !== 0 && count + cost > bucket.limit) admitted = false;
      }
      if (!admitted) return { admitted, used };
      if (slot === undefined) {
        slot = { counters: [], end: 0 };
        slots.set(key, slot);
      }
      for (let i = 0; i < buckets.length; i++) {
        const bucket = buckets[i] as QuotaBucket;
        const counter = current[i];
        if (counter) counter.used += cost;
        else {
          slot.counters.push({ period: bucket.period, start: bucket.start, end: bucket.end, used: cost });
          size++;
          if (bucket.end > slot.end) slot.end = bucket.end;
        }
        used[i] = (used[i] as number) + cost;
      }
      return { admitted, used };
    },
    async peek(request: PeekRequest): Promise<number[]> {
      const { clientId, apiPath, buckets, now } = request;
      const slot = liveSlot(slotKey(clientId, apiPath), now);
      return buckets.map((bucket) => find(slot, bucket.period, bucket.start)?.used ?? 0);
    },
    sweep(now: number): number {
      let removed = 0;
      for (const [key, slot] of slots) {
        const live = slot.counters.filter((counter) => counter.end + grace > now);
        removed += slot.counters.length - live.length;
        if (live.length === 0) slots.delete(key);
        else slot.counters = live;
      }
      size -= removed;
      cursor = undefined;
      return removed;
    },
    clear() {
      slots.clear();
      size = 0;
      cursor = undefined;
    },
    async close() {
      store.clear();
    },
  };
  return store;
}
