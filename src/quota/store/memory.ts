/**
 * Quota counters in process memory: the default store, exact within one process.
 *
 * The check of every bucket and the increment of every bucket happen in one synchronous step
 * (no `await` in between), so no other call can interleave: that is the whole atomicity story.
 *
 * Expiry is by timestamps, never timers: a counter whose bucket ended is treated as absent and
 * is swept later. (A month is longer than the ~24.8 days a Node timer can wait, which is one of
 * the reasons the counters are not built on rate-limiter-flexible's memory store.) The sweep is
 * amortised: every call examines a few entries through a persistent Map iterator, more than a
 * call can create, so expired counters never pile up and no call ever pays for a full scan.
 */
import { checkConsumeRequest, type ConsumeRequest, type ConsumeResult, type PeekRequest, type QuotaStore } from './types.js';

export interface MemoryQuotaStoreOptions {
  /** Entries examined by the sweep per call (default 8; must exceed the 3 a call can create). */
  sweepPerCall?: number;
}

export interface MemoryQuotaStore extends QuotaStore {
  readonly kind: 'memory';
  /** Counters held, expired ones not yet swept included. */
  readonly size: number;
  /** Drops every expired counter now; returns how many. */
  sweep(now: number): number;
  /** Forgets every counter. */
  clear(): void;
  /** Forgets every counter (there is nothing else to release). */
  close(): Promise<void>;
}

interface Counter {
  used: number;
  /** Bucket end, UTC ms. */
  end: number;
}

function counterKey(clientId: string, apiPath: string, period: string, start: number): string {
  // clientId is encoded so a ':' in it cannot make two (client, path) pairs share a key.
  return `${encodeURIComponent(clientId)}\u0000${apiPath}\u0000${period}\u0000${start}`;
}

/**
 * @example
 * const service = createQuotaService({ store: createMemoryQuotaStore() }); // also the default
 */
export function createMemoryQuotaStore(options: MemoryQuotaStoreOptions = {}): MemoryQuotaStore {
  const sweepPerCall = options.sweepPerCall ?? 8;
  if (!Number.isSafeInteger(sweepPerCall) || sweepPerCall < 4) throw new TypeError('memory quota store: sweepPerCall must be an integer >= 4');
  const counters = new Map<string, Counter>();
  let cursor: Iterator<[string, Counter]> | undefined;

  /** Examines up to `budget` entries from where the last call stopped; deletes expired ones. */
  const sweepSome = (now: number, budget: number): void => {
    for (let i = 0; i < budget && counters.size > 0; i++) {
      cursor ??= counters.entries();
      const next = cursor.next();
      if (next.done) {
        cursor = undefined;
        continue;
      }
      const [key, counter] = next.value;
      // Deleting the entry the iterator just returned is safe for Map iteration.
      if (counter.end <= now) counters.delete(key);
    }
  };

  const live = (key: string, now: number): Counter | undefined => {
    const counter = counters.get(key);
    if (counter === undefined) return undefined;
    if (counter.end <= now) {
      counters.delete(key);
      return undefined;
    }
    return counter;
  };

  const store: MemoryQuotaStore = {
    kind: 'memory',
    inProcess: true,
    get size() {
      return counters.size;
    },
    // `async` without a single `await`: the body runs to completion synchronously, atomically.
    async consume(request: ConsumeRequest): Promise<ConsumeResult> {
      checkConsumeRequest(request);
      const { clientId, apiPath, cost, buckets, now } = request;
      sweepSome(now, sweepPerCall);
      const keys = buckets.map((bucket) => counterKey(clientId, apiPath, bucket.period, bucket.start));
      const current = keys.map((key) => live(key, now));
      const used = current.map((counter) => counter?.used ?? 0);
      const admitted = buckets.every((bucket, i) => bucket.limit === 0 || (used[i] as number) + cost <= bucket.limit);
      if (!admitted) return { admitted, used };
      buckets.forEach((bucket, i) => {
        const counter = current[i];
        if (counter) counter.used += cost;
        else counters.set(keys[i] as string, { used: cost, end: bucket.end });
        used[i] = (used[i] as number) + cost;
      });
      return { admitted, used };
    },
    async peek(request: PeekRequest): Promise<number[]> {
      const { clientId, apiPath, buckets, now } = request;
      return buckets.map((bucket) => live(counterKey(clientId, apiPath, bucket.period, bucket.start), now)?.used ?? 0);
    },
    sweep(now: number): number {
      let removed = 0;
      for (const [key, counter] of counters) {
        if (counter.end <= now) {
          counters.delete(key);
          removed++;
        }
      }
      cursor = undefined;
      return removed;
    },
    clear() {
      counters.clear();
      cursor = undefined;
    },
    async close() {
      store.clear();
    },
  };
  return store;
}
