/**
 * The one deadline-and-outage mechanism of every shared-store call: the OAuth store, the quota
 * store and rule source, and the admin API's store calls (docs/stores.md#deadlines-and-outages).
 *
 * - The deadline measures the store: it starts when the call leaves the local queue in front of
 *   the store's connections (store-lane.ts), or when a store that batches calls says it sent one.
 * - Late is not failing. A call with no answer at its deadline keeps waiting while the store
 *   answers other calls: it fails with a StoreTimeoutError only once it has waited twice its
 *   deadline and the store has answered no call for as long (it is silent, not slow), or
 *   after LATE_LIMIT deadlines whatever else happens. A call that fails that way, or with an
 *   error, starts an outage; during an outage a call fails at its deadline, and the calls still
 *   waiting fail at once.
 * - One warning when an outage starts and one notice when a call issued after it succeeds,
 *   however many calls fail in between; `onError` hears every failed call (the metrics).
 * - An outage that starts less than RELAPSE_WINDOW_MS after the last warning is a relapse: no
 *   line, unless a call fails while it is still on once the window is over (then its warning is
 *   logged, so the last line never says "available again" of a store that is down). The next
 *   warning counts the relapses: a store that flaps logs at most one warning and one notice a
 *   window. Only the log is damped: a relapse is an outage for the calls, whenBack and onError.
 * - A call shed by the local queue (StoreBusyError) is load: it fails alone and starts no outage.
 * - A call the store answered with an error about one record's data (StoreDataError: a Redis key
 *   of the wrong type, a PostgreSQL data exception) was answered: it fails alone, is no failure
 *   of the store (no outage, no onError) and, as any answer, may end an outage.
 */
import { StoreUnavailableError } from './errors.js';
import type { Logger } from './logger.js';
import { isRecordDataError, isStoreCallError, StoreBusyError, StoreDataError, StoreFailedError, StoreTimeoutError, type StoreCallError } from './store-errors.js';
import { withConnection, type StoreLane } from './store-lane.js';

/** A late call gives up after this many deadlines, even while the store answers other calls. */
export const LATE_LIMIT = 10;

/**
 * An outage that starts this soon after the last outage warning is a relapse and logs nothing.
 * A store that half-works (a Redis that answers reads and refuses writes: OOM under noeviction, a
 * READONLY replica) starts and ends an outage with nearly every call, so anyone who can send
 * requests could otherwise fill the log (docs/stores.md#deadlines-and-outages).
 */
export const RELAPSE_WINDOW_MS = 60_000;

export interface StoreGuardOptions {
  /** Names the store in the log and in errors, e.g. `OAuth store (redis)`. */
  name: string;
  timeoutMs: number;
  logger: Logger;
  /** Hears every failed or timed-out call (the metrics count them). */
  onError?: () => void;
  /** The local queue in front of the store's connections: waiting there does not count against the deadline. */
  lane?: StoreLane;
  /** What the service does while the store is away, for the warning. Default: answering 503 until it is back. */
  meanwhile?: string;
  /** The clock the outage's length is measured with. Default `Date.now`. */
  now?: () => number;
  /** Fields every log line about this store carries (they may replace `store`, which is `name` by default). */
  fields?: Record<string, unknown>;
}

/** What a store that queues calls itself (a batch) tells the guard. */
export interface StoreCall {
  /** The call waits locally (for a batch in flight, for a connection): its deadline stops. */
  waiting(): void;
  /** The call went to the store: its deadline starts now. */
  sent(): void;
  /**
   * One round trip of a call that makes many (a SCAN through a big keyspace) was answered: the
   * store is answering, and the next round trip's deadline starts now. A long listing is load,
   * not an outage, as long as each of its round trips is answered in time. (Optional, so that a
   * StoreCall made elsewhere, a test's, still type-checks; the guard's always has it.)
   */
  answered?(): void;
  /**
   * True once the guard has answered the call's caller (a failure at its deadline, say): a call of
   * many round trips stops at the next one, as nobody waits for the rest. (Optional, as `answered`.)
   */
  readonly settled?: boolean;
  /** True while the store is known to be failing: then the call should not wait for a connection. */
  readonly failing: boolean;
}

/**
 * For a store call of many round trips, after each is answered: tells the guard (its deadline is
 * the round trip's), and stops the call, throwing, once the guard has answered its caller, so a
 * walk nobody waits for any more does not go on working the store. A deletion stopped so leaves
 * what it has not reached, to be finished by a retry (docs/stores.md#deadlines-and-outages).
 */
export function roundTripAnswered(call: Pick<StoreCall, 'answered' | 'settled'> | undefined): void {
  call?.answered?.();
  if (call?.settled) throw new Error('stopped: the store guard already answered this call');
}

export interface StoreGuard {
  readonly name: string;
  /** The deadline of a call once it has started (StoreGuardOptions.timeoutMs). */
  readonly timeoutMs: number;
  /** True when calls wait in a lane before they start. */
  readonly queues: boolean;
  /** True from the failure that started an outage until a later call succeeds. */
  readonly degraded: boolean;
  /**
   * Resolves with `work`'s answer, or rejects with a StoreFailedError (a StoreDataError for
   * damaged data), StoreTimeoutError or StoreBusyError. With `queued: true` the work enters no
   * lane: it queues by itself and says when it sent the call.
   */
  ask<T>(work: (call: StoreCall) => Promise<T>, options?: { queued?: boolean }): Promise<T>;
  /** `ask`, with every failure answered as a 503 StoreUnavailableError (its `cause` says why). */
  run<T>(work: (call: StoreCall) => Promise<T>): Promise<T>;
  /** Runs `action` when the current outage ends (at once when there is none); the answer forgets it before then. */
  whenBack(action: () => void): () => void;
  /** A store that answered in process (no promise) failed: judged, counted and logged like a call; answers the error to report. */
  failedNow(error: unknown): StoreCallError;
  /** A store that answered in process succeeded. */
  succeededNow(): void;
}

/** What a store threw or rejected with, as the guard answers it. Read on failure only. */
function callError(name: string, error: unknown): StoreCallError {
  if (isStoreCallError(error)) return error;
  return isRecordDataError(error) ? new StoreDataError(name, error) : new StoreFailedError(name, error);
}

export function createStoreGuard(options: StoreGuardOptions): StoreGuard {
  const { name, timeoutMs, logger, onError, lane, meanwhile = 'answering 503 until it is back', fields = {}, now = Date.now } = options;
  // Calls are numbered so that a straggler does not fake a change: a call issued before the
  // outage was seen cannot end it, and one issued before the recovery cannot start a new one.
  let issued = 0;
  let healedAfter = 0;
  let outage: { seenAfter: number; since: number; logged: boolean } | undefined;
  /** When the last outage warning was logged, and how many outages ended unlogged since. */
  let warnedAt = -Infinity;
  let relapses = 0;
  let waiting = new Set<() => void>();
  /**
   * Calls past their deadline, and calls waiting locally with their deadline stopped: they fail
   * at once when an outage starts, so nothing waits on a store known to be failing.
   */
  const late = new Set<() => void>();
  const paused = new Set<() => void>();
  /** When the store last answered a call (with a value or an error), by performance.now(). */
  let answeredAt = -Infinity;

  /** True within the window after the last warning (a clock set back ends the window). */
  const relapsing = (at: number) => at >= warnedAt && at - warnedAt < RELAPSE_WINDOW_MS;
  const warn = (current: NonNullable<typeof outage>, at: number, error: StoreCallError): void => {
    const flapping = relapses > 0 ? { relapses } : {};
    // A relapse logged once it outlasted the window says how long the store has been down.
    const down = at > current.since ? { unavailableForMs: at - current.since } : {};
    const count = relapses > 0 ? ` (flapping: ${relapses} outage${relapses === 1 ? '' : 's'} since the last warning went unlogged)` : '';
    logger.warn({ store: name, ...fields, err: error, ...flapping, ...down }, `${name} unavailable: ${meanwhile}${count}`);
    current.logged = true;
    warnedAt = at;
    relapses = 0;
  };
  const failed = (call: number, error: StoreCallError): void => {
    onError?.();
    if (outage) {
      // A relapse that outlasts the window is an outage like any other: its warning is due.
      const at = outage.logged ? undefined : now();
      if (at !== undefined && !relapsing(at)) warn(outage, at, error);
      return;
    }
    if (call <= healedAfter) return;
    const since = now();
    outage = { seenAfter: issued, since, logged: false };
    if (!relapsing(since)) warn(outage, since, error);
    for (const expire of [...late, ...paused]) expire();
    lane?.shedWaiting(name);
  };
  const succeeded = (call: number): void => {
    if (!outage || call <= outage.seenAfter) return;
    if (!outage.logged) relapses++;
    else logger.info({ store: name, ...fields, unavailableForMs: Math.max(0, now() - outage.since) }, `${name} available again`);
    outage = undefined;
    healedAfter = issued;
    const actions = waiting;
    waiting = new Set();
    for (const action of actions) action();
  };

  const attempt = <T>(work: (call: StoreCall) => Promise<T>): Promise<T> => {
    const call = ++issued;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let sentAt = performance.now();
      const stop = () => {
        settled = true;
        clearTimeout(timer);
        late.delete(expire);
        paused.delete(expire);
      };
      const fail = (error: StoreCallError) => {
        if (settled) return;
        stop();
        if (error instanceof StoreDataError) succeeded(call);
        else if (!(error instanceof StoreBusyError)) failed(call, error);
        reject(error);
      };
      function expire(): void {
        fail(new StoreTimeoutError(name, timeoutMs));
      }
      // An answer that arrived while this process was busy is read before the deadline is judged:
      // the poll phase runs between this timer and the check.
      const judge = () =>
        setImmediate(() => {
          if (settled) return;
          const at = performance.now();
          const waited = at - sentAt;
          // A round trip answered since this timer was set (answered()): the next one's deadline is judged.
          if (waited < timeoutMs) return arm(timeoutMs - waited);
          const silent = at - answeredAt >= 2 * timeoutMs;
          if (outage || (silent && waited >= 2 * timeoutMs) || waited >= LATE_LIMIT * timeoutMs) return expire();
          late.add(expire);
          // Judged again when the store may have been silent for twice the deadline, or at the limit.
          const next = Math.max(2 * timeoutMs - waited, answeredAt + 2 * timeoutMs - at, 1);
          arm(Math.min(next, LATE_LIMIT * timeoutMs - waited));
        });
      const arm = (ms = timeoutMs) => {
        clearTimeout(timer);
        timer = setTimeout(judge, ms);
        timer.unref?.();
      };
      const handle: StoreCall = {
        waiting: () => {
          // While the store is failing the deadline keeps running: nothing waits for it.
          if (settled || outage) return;
          clearTimeout(timer);
          paused.add(expire);
        },
        sent: () => {
          if (settled) return;
          paused.delete(expire);
          sentAt = performance.now();
          arm();
        },
        answered: () => {
          answeredAt = performance.now();
          if (settled) return;
          // No longer late; the timer set for the last round trip judges this one's deadline from here.
          late.delete(expire);
          sentAt = answeredAt;
        },
        get settled() {
          return settled;
        },
        get failing() {
          return outage !== undefined;
        },
      };
      arm();
      let pending: Promise<T>;
      try {
        pending = work(handle);
      } catch (error) {
        fail(callError(name, error));
        return;
      }
      pending.then(
        (value) => {
          answeredAt = performance.now();
          if (settled) return;
          stop();
          succeeded(call);
          resolve(value);
        },
        (error: unknown) => {
          if (!(error instanceof StoreBusyError)) answeredAt = performance.now();
          fail(callError(name, error));
        },
      );
    });
  };

  const ask = <T>(work: (call: StoreCall) => Promise<T>, options?: { queued?: boolean }): Promise<T> => {
    if (!lane || options?.queued) return attempt(work);
    return withConnection(lane, name, outage === undefined, () => attempt(work));
  };

  return {
    name,
    timeoutMs,
    queues: lane !== undefined,
    get degraded() {
      return outage !== undefined;
    },
    ask,
    run: (work) =>
      ask(work).catch((error: unknown) => {
        throw new StoreUnavailableError(name, error);
      }),
    whenBack(action) {
      if (!outage) {
        action();
        return () => {};
      }
      // A Set: one forgotten before the store is back takes no memory until then.
      const once = () => action();
      waiting.add(once);
      return () => waiting.delete(once);
    },
    failedNow(error) {
      const failure = callError(name, error);
      if (failure instanceof StoreDataError) {
        if (outage) succeeded(++issued);
      } else if (!(failure instanceof StoreBusyError)) failed(++issued, failure);
      return failure;
    },
    succeededNow() {
      // Cheap enough for every in-process answer: nothing happens outside an outage.
      if (outage) succeeded(++issued);
    },
  };
}
