/**
 * The platform's bounded caches, on lru-cache: each holds at most `max` entries and, when full,
 * lets the least recently used go first, so what a busy process keeps asking for stays while
 * idle entries leave. An entry's lifetime is read from the platform's clock (`now`), so tests
 * and hosts that inject time see expiry follow it.
 *
 * Expiry is kept here rather than in lru-cache's `ttl`: that one treats an entry set at clock
 * value 0 as immortal, keeps an entry one millisecond past its lifetime, and by default caches
 * the clock's reading for a millisecond with a timer. An expired entry is not served, but stays
 * until it is pushed out, so `stale()` can still answer what a failing source last said.
 */
import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from './clock.js';
import { configurationError } from './errors.js';

export interface CacheOptions {
  /** Most entries held (for a PairCache: pairs). Past it the least recently used go first. */
  max: number;
  /** How long an entry is served after it is set, in ms; without it, until it is pushed out. */
  ttlMs?: number | undefined;
  now?: Clock | undefined;
}

interface Entry<V> {
  value: V;
  /** Ms since the epoch; Infinity for an entry without a lifetime. */
  until: number;
}

/** Reads and writes entries with the lifetime and clock of one cache's options. */
class Lifetimes {
  private readonly ttlMs: number | undefined;
  private readonly now: Clock;

  constructor(options: CacheOptions) {
    if (!Number.isSafeInteger(options.max) || options.max < 1) throw configurationError('invalid_option', 'max', `a cache's max must be a positive integer, not ${options.max}`);
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? systemClock;
  }

  entry<V>(value: V, ttlMs = this.ttlMs): Entry<V> {
    return { value, until: ttlMs === undefined ? Infinity : this.now() + ttlMs };
  }

  fresh<V>(entry: Entry<V> | undefined): V | undefined {
    // Only a cache with lifetimes reads the clock.
    return entry !== undefined && (entry.until === Infinity || entry.until > this.now()) ? entry.value : undefined;
  }
}

/** Values by key: least recently used out first, each for `ttlMs` at most. */
export class BoundedCache<K extends {}, V> {
  private readonly entries: LRUCache<K, Entry<V>>;
  private readonly lifetimes: Lifetimes;

  constructor(options: CacheOptions) {
    this.lifetimes = new Lifetimes(options);
    this.entries = new LRUCache({ max: options.max });
  }

  /** The value while it is fresh; a hit counts as use. */
  get(key: K): V | undefined {
    return this.lifetimes.fresh(this.entries.get(key));
  }

  /** `ttlMs` overrides the cache's lifetime for this entry. */
  set(key: K, value: V, ttlMs?: number): void {
    this.entries.set(key, this.lifetimes.entry(value, ttlMs));
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Values per pair of keys (a client id and a path, say) on a hot path: two lookups, no key string
 * built per call. Bounded by pairs; when full, the least recently used first keys go with all
 * their pairs, so an active client keeps its paths while idle clients leave.
 */
export class PairCache<V> {
  private readonly byFirst: LRUCache<string, Map<string, Entry<V>>>;
  private readonly lifetimes: Lifetimes;

  constructor(options: CacheOptions) {
    this.lifetimes = new Lifetimes(options);
    this.byFirst = new LRUCache({ maxSize: options.max, sizeCalculation: (bySecond) => Math.max(1, bySecond.size) });
  }

  /** The value while it is fresh; a hit counts as use of its first key. */
  get(first: string, second: string): V | undefined {
    return this.lifetimes.fresh(this.byFirst.get(first)?.get(second));
  }

  /** The value however old, as long as the pair is still held: what a failing source falls back to. */
  stale(first: string, second: string): V | undefined {
    return this.byFirst.peek(first)?.get(second)?.value;
  }

  set(first: string, second: string, value: V): void {
    const bySecond = this.byFirst.get(first) ?? new Map<string, Entry<V>>();
    const grows = !bySecond.has(second);
    bySecond.set(second, this.lifetimes.entry(value));
    if (!grows) return;
    // lru-cache measures an entry when it is set anew: the least recently used go until it fits.
    this.byFirst.delete(first);
    this.byFirst.set(first, bySecond);
  }

  /** Drops one pair, or every pair of `first` when `second` is undefined. */
  delete(first: string, second?: string): void {
    if (second === undefined) this.byFirst.delete(first);
    else this.byFirst.peek(first)?.delete(second);
  }

  clear(): void {
    this.byFirst.clear();
  }
}
