/**
 * The local queue in front of a connection pool (docs/stores.md#the-local-queue). A pg pool has
 * `max` connections; a call that finds them all busy waits here, in arrival order, instead of in
 * the pool, so a store call's deadline starts when it gets a connection: time spent behind other
 * calls of this process is load, not an outage. The queue is bounded: a call that would wait
 * behind MAX_WAITING others, or longer than MAX_WAIT_MS, is shed with a StoreBusyError, which is
 * answered 503 with `Retry-After`. While the store is known to be failing nothing waits: a call
 * that finds every connection busy is shed at once, and so are the calls of the same store
 * waiting when it is found failing.
 *
 * One lane per pool, whoever uses it (the OAuth store, the quota store, the admin API): the width
 * is the pool's, so the pool itself never queues.
 */
import { StoreBusyError } from './store-errors.js';

/** Calls that may wait for a connection of one pool at once; one more is shed. */
export const MAX_WAITING = 1000;
/** How long a call may wait for a connection before it is shed. */
export const MAX_WAIT_MS = 10_000;

export interface StoreLane {
  /** Connections the pool opens at most. */
  readonly width: number;
  /**
   * Resolves with the function that gives the connection back; rejects with a StoreBusyError past
   * the bound, or at once with `wait: false` when every connection is busy. `since`
   * (performance.now()) is when the call began to wait in this process, if before it came here
   * (a batch waiting for the one in flight): the bound counts the whole wait.
   */
  enter(store: string, wait?: boolean, since?: number): Promise<() => void>;
  /**
   * `store` has just been found failing: its calls waiting for a connection are shed now with a
   * StoreBusyError, as one arriving during the outage would be, rather than each waiting for a
   * connection only to meet the deadline in turn. Calls of the pool's other users wait on: each
   * finds out through its own guard, which decides what its outage means (docs/stores.md).
   */
  shedWaiting(store: string): void;
}

/**
 * `work` once it has a connection of `lane`; the connection is given back when its answer settles.
 * With `wait: false` (the store is failing) it is shed at once when every connection is busy.
 */
export function withConnection<T>(lane: StoreLane, store: string, wait: boolean, work: () => Promise<T>): Promise<T> {
  return lane.enter(store, wait).then((release) => {
    let answer: Promise<T>;
    try {
      answer = work();
    } catch (error) {
      release();
      throw error;
    }
    answer.then(release, release);
    return answer;
  });
}

interface Waiter {
  store: string;
  admit(): void;
  shed(error: StoreBusyError): void;
  timer: NodeJS.Timeout;
}

export function createStoreLane(width: number, maxWaitMs: number): StoreLane {
  let busy = 0;
  const waiting: Waiter[] = [];

  const release = (): void => {
    const next = waiting.shift();
    if (!next) {
      busy--;
      return;
    }
    clearTimeout(next.timer);
    next.admit();
  };
  const releaser = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  };

  return {
    width,
    enter(store, wait = true, since?: number) {
      if (busy < width) {
        busy++;
        return Promise.resolve(releaser());
      }
      if (!wait) return Promise.reject(new StoreBusyError(store, `all of its ${width} connections are busy while it is failing`));
      if (waiting.length >= MAX_WAITING) {
        return Promise.reject(new StoreBusyError(store, `${MAX_WAITING} calls already wait for one of its ${width} connections`));
      }
      const left = since === undefined ? maxWaitMs : maxWaitMs - (performance.now() - since);
      if (left <= 0) return Promise.reject(new StoreBusyError(store, `no connection of its ${width} was free within ${maxWaitMs} ms`));
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          store,
          admit: () => resolve(releaser()),
          shed: reject,
          timer: setTimeout(() => {
            const at = waiting.indexOf(waiter);
            if (at !== -1) waiting.splice(at, 1);
            reject(new StoreBusyError(store, `no connection of its ${width} was free within ${maxWaitMs} ms`));
          }, left),
        };
        waiter.timer.unref?.();
        waiting.push(waiter);
      });
    },
    shedWaiting(store) {
      for (let i = waiting.length - 1; i >= 0; i--) {
        const waiter = waiting[i]!;
        if (waiter.store !== store) continue;
        waiting.splice(i, 1);
        clearTimeout(waiter.timer);
        waiter.shed(new StoreBusyError(store, `it is failing: the calls waiting for one of its ${width} connections are answered at once`));
      }
    },
  };
}

interface PoolSettings {
  connect?: unknown;
  totalCount?: unknown;
  options?: { max?: unknown };
}

const lanes = new WeakMap<object, StoreLane>();

/** The lane of a pg pool (one per pool object); undefined for a single client (`pg.Client`), which queues by itself. */
export function laneOfPool(pool: object): StoreLane | undefined {
  const settings = pool as PoolSettings;
  if (typeof settings.connect !== 'function' || (typeof settings.totalCount !== 'number' && typeof settings.options?.max !== 'number')) return undefined;
  let lane = lanes.get(pool);
  if (!lane) {
    const { max } = settings.options ?? {};
    lane = createStoreLane(typeof max === 'number' && max > 0 ? max : 10, MAX_WAIT_MS);
    lanes.set(pool, lane);
  }
  return lane;
}
