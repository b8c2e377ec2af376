/**
 * Where the brute-force limits count (docs/oauth.md, "Brute-force limits"): per counted key, a
 * window fixed from its first failure holding the SET of the attempts counted in it. Counting an
 * attempt adds its id, giving it back removes that id; both are one atomic store step, and both
 * are idempotent. So a step sent again (a retry, a client resending after a reconnect) counts
 * once, and an attempt that never heard whether a count landed can give back every key it tried:
 * where its id never landed, the give-back changes nothing, and it never takes away another
 * attempt's failure. A count can still reach the store after its own give-back (held on a
 * connection whose answer was lost, or a copy of one that landed: a client resent it after a
 * reconnect, and the bytes first sent arrive late): every give-back leaves its id behind as given
 * back, whether it found the id counted or not, remembered for a window's length from its own
 * give-back, and a count for an id given back counts nothing. Counters cannot give this: an
 * increment whose answer was lost can be neither kept (a client retrying through a network fault
 * would lock itself out) nor blindly undone (a guesser could bank free tries during an outage).
 * Each id given back is forgotten on its own, a window after its give-back, so a key holds about
 * one window's give-backs however long they go on (a store failing for hours under one busy
 * address's traffic): memory and Redis prune the forgotten ones whenever the key is touched,
 * PostgreSQL deletes them with its expired rows, at most a minute later.
 */
import type { PostgresOAuthStore, PostgresRateLimitStore } from './store/postgres.js';
import type { RedisOAuthStore, RedisRateLimitStore } from './store/redis.js';
import { GIVE_BACK_FAILURE, PEEK_FAILURES, RESERVE_FAILURE, type Script } from './store/redis-scripts.js';
import type { OAuthStore } from './store/types.js';

export interface FailureWindow {
  /** Attempts counted in the key's window. */
  readonly count: number;
  /** Until the window ends. */
  readonly msLeft: number;
}

export interface FailureWindows {
  /** How long a window lasts from its first count: nothing counted stays counted longer. */
  readonly windowMs: number;
  /** The key's live window, or null when it has none. */
  peek(key: string): Promise<FailureWindow | null>;
  /** Counts the attempt in the key's window (starting one when the last ended); counting it again changes nothing. */
  reserve(key: string, attemptId: string): Promise<FailureWindow>;
  /** Takes the attempt out of the key's window (an attempt not counted there changes no count); a count of it arriving later, for the first time or again, counts nothing. */
  giveBack(key: string, attemptId: string): Promise<void>;
}

/** Where the store lets the windows count: its Redis or PostgreSQL; undefined for other stores. */
export function sharedWindowsOf(store: OAuthStore | undefined): RedisRateLimitStore | PostgresRateLimitStore | undefined {
  return (store as Partial<RedisOAuthStore | PostgresOAuthStore> | undefined)?.rateLimitStore;
}

/** On the store's Redis or PostgreSQL, shared by every process on it; in process memory for other stores. */
export function failureWindows(store: OAuthStore | undefined, name: string, windowMs: number): FailureWindows {
  const shared = sharedWindowsOf(store);
  if (shared?.kind === 'redis') return redisWindows(shared, name, windowMs);
  if (shared?.kind === 'postgres') return postgresWindows(shared, name, windowMs);
  return memoryWindows(windowMs);
}

/** Expired windows deleted per call at most: each call adds one window at most, so expired ones never pile up. */
const MEMORY_SWEEP = 32;

/**
 * In this process only: the default when the store shares none, and the admin token's limit,
 * which is per process by design (docs/operator.md#wrong-tokens).
 *
 * One Map per throttle. Every window lasts as long and is (re)inserted when it starts, so the
 * Map's order is the order in which windows end: the expired ones are at its front. Time is
 * monotonic here: nothing outside the process reads these windows.
 */
export function memoryWindows(windowMs: number): FailureWindows {
  const now = () => performance.now();
  const windows = new Map<string, { ids: Set<string>; end: number }>();
  // Ids given back, counted or not, per key, as on the shared stores: nothing arrives late in
  // process, but a count after its own give-back counts nothing on every store alike.
  // Each id ends a window after its own give-back; every one lasts as long and the clock is
  // monotonic, so a key's ids are in the order they end in (re-inserted when given back again),
  // and `end`, its last one's, orders the keys as the windows' ends order theirs.
  const given = new Map<string, { ends: Map<string, number>; end: number }>();
  const live = (key: string, at: number) => {
    const window = windows.get(key);
    return window !== undefined && window.end > at && window.ids.size > 0 ? window : undefined;
  };
  const stateOf = (window: { ids: Set<string>; end: number }, at: number): FailureWindow => ({ count: window.ids.size, msLeft: window.end - at });
  const sweep = (map: Map<string, { end: number }>, at: number) => {
    let swept = 0;
    for (const [key, window] of map) {
      if (window.end > at || swept++ >= MEMORY_SWEEP) break;
      map.delete(key);
    }
  };
  /** The key's ids given back and not yet forgotten, the forgotten ones pruned from the front. */
  const givenBack = (key: string, at: number) => {
    const held = given.get(key);
    if (held === undefined || held.end <= at) return undefined;
    for (const [id, end] of held.ends) {
      if (end > at) break;
      held.ends.delete(id);
    }
    return held;
  };
  return {
    windowMs,
    async peek(key) {
      const at = now();
      const window = live(key, at);
      return window ? stateOf(window, at) : null;
    },
    async reserve(key, attemptId) {
      const at = now();
      sweep(windows, at);
      sweep(given, at);
      if (givenBack(key, at)?.ends.has(attemptId)) {
        const window = live(key, at);
        return window ? stateOf(window, at) : { count: 0, msLeft: 0 };
      }
      let window = live(key, at);
      if (!window) {
        windows.delete(key);
        window = { ids: new Set(), end: at + windowMs };
        windows.set(key, window);
      }
      window.ids.add(attemptId);
      return stateOf(window, at);
    },
    async giveBack(key, attemptId) {
      const window = windows.get(key);
      // An empty window holds no failure: the next one starts afresh, as on Redis (an empty set is no key).
      if (window?.ids.delete(attemptId) && window.ids.size === 0) windows.delete(key);
      const at = now();
      sweep(given, at);
      const ends = givenBack(key, at)?.ends ?? new Map<string, number>();
      ends.delete(attemptId);
      ends.set(attemptId, at + windowMs);
      // Reinserted, so the Map stays in the order its entries end in, as the windows' does.
      given.delete(key);
      given.set(key, { ends, end: at + windowMs });
    },
  };
}

/**
 * Per counted key, `<prefix>failures:<name>:{<hash>}`, a set of attempt ids with the window as
 * TTL, and `<prefix>given-back:<name>:{<hash>}`, the ids given back (counted or not), a sorted
 * set scored by when each is forgotten, with a window's length from the last of them as TTL.
 * The hash tag puts both on one Redis Cluster slot, so one script can read and write both.
 * A window ends by the server's clock (its TTL); an id given back is forgotten by the store's,
 * as its grants expire by it (redis.ts): the attempt whose count may arrive late gives it back
 * on that same clock, and its count carries the time it was sent.
 */
function redisWindows(shared: RedisRateLimitStore, name: string, windowMs: number): FailureWindows {
  const run = (lua: Script, key: string, ...args: (string | number)[]) =>
    shared.run(lua, [`${shared.keyPrefix}failures:${name}:{${key}}`, `${shared.keyPrefix}given-back:${name}:{${key}}`], args);
  const windowOf = (answer: unknown): FailureWindow => {
    const [count, msLeft] = answer as [number, number];
    return { count: Number(count), msLeft: Number(msLeft) };
  };
  return {
    windowMs,
    async peek(key) {
      const window = windowOf(await run(PEEK_FAILURES, key));
      return window.count > 0 ? window : null;
    },
    reserve: async (key, attemptId) => windowOf(await run(RESERVE_FAILURE, key, attemptId, windowMs, shared.now())),
    async giveBack(key, attemptId) {
      await run(GIVE_BACK_FAILURE, key, attemptId, windowMs, shared.now());
    },
  };
}

/**
 * Rows of the tables oauth_failure_windows (a key's window) and oauth_given_back (one per id
 * given back), which the store's migration creates (so `migrate: false` leaves them to the
 * operator, like the store's other tables). Time is the store's clock, as a parameter, as its
 * other statements take it. Rows of ended or empty windows and of forgotten ids go with the
 * store's own expired rows (`deleteExpired`, at most once a minute after a write): a key holds
 * a window's give-backs and at most a minute's more, and each statement reads and writes one
 * id's row by its key, however many a busy key holds.
 */
function postgresWindows(shared: PostgresRateLimitStore, name: string, windowMs: number): FailureWindows {
  const sql = shared.statements;
  const stored = (key: string) => `${name}:${key}`;
  const query = async <T>(text: string, values: unknown[]): Promise<T[]> => (await shared.query<T>(text, values)).rows;
  const windowOf = (row: { count: number; window_end: string | number }, at: number): FailureWindow => ({
    count: Number(row.count),
    msLeft: Number(row.window_end) - at,
  });
  return {
    windowMs,
    async peek(key) {
      const at = shared.now();
      const [row] = await query<{ count: number; window_end: string }>(sql.peek, [stored(key), at]);
      return row ? windowOf(row, at) : null;
    },
    async reserve(key, attemptId) {
      const at = shared.now();
      const [row] = await query<{ count: number; window_end: string }>(sql.reserve, [stored(key), attemptId, at, windowMs]);
      shared.written();
      return windowOf(row!, at);
    },
    async giveBack(key, attemptId) {
      // One statement: the fewer a give-back needs, the fewer a breaking connection can interrupt.
      await query(sql.giveBack, [stored(key), attemptId, shared.now(), windowMs]);
      shared.written();
    },
  };
}
