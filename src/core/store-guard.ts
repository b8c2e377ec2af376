/**
 * A deadline on every call to a shared store (Redis, PostgreSQL, the host's own), and one log
 * line per outage instead of one per failed request. A call that fails or misses its deadline
 * rejects with a StoreUnavailableError, which every endpoint answers as 503 with `Retry-After`;
 * the next call tries the store again, so the service heals as soon as the store is back.
 */
import { StoreUnavailableError } from './errors.js';
import { isThenable } from './maybe-promise.js';
import type { Logger } from './logger.js';

export interface StoreGuardOptions {
  /** Names the store in the log, e.g. `OAuth store (redis)`. */
  name: string;
  timeoutMs: number;
  logger: Logger;
  /** Hears every failed or late call (the metrics count them). */
  onError?: () => void;
}

export interface StoreGuard {
  /** Resolves with `work`, or rejects with a StoreUnavailableError when it fails or is late. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Runs `action` when the current outage ends (at once when there is none). */
  whenBack(action: () => void): void;
}

export function createStoreGuard({ name, timeoutMs, logger, onError }: StoreGuardOptions): StoreGuard {
  // Calls are numbered so that a straggler does not fake a change: a call issued before the
  // outage was seen cannot end it, and one issued before the recovery cannot start a new one.
  let issued = 0;
  let healedAfter = 0;
  let outage: { seenAfter: number; since: number } | undefined;
  let waiting: (() => void)[] = [];

  const failed = (call: number, error: unknown): void => {
    if (outage || call <= healedAfter) return;
    outage = { seenAfter: issued, since: Date.now() };
    logger.warn({ store: name, err: error }, `${name} unavailable: answering 503 until it is back`);
  };
  const succeeded = (call: number): void => {
    if (!outage || call <= outage.seenAfter) return;
    logger.info({ store: name, unavailableForMs: Date.now() - outage.since }, `${name} available again`);
    outage = undefined;
    healedAfter = issued;
    const actions = waiting;
    waiting = [];
    for (const action of actions) action();
  };

  return {
    whenBack(action) {
      if (outage) waiting.push(action);
      else action();
    },
    run<T>(work: () => Promise<T>): Promise<T> {
      const call = ++issued;
      return new Promise<T>((resolve, reject) => {
        const fail = (error: unknown) => {
          clearTimeout(timer);
          failed(call, error);
          onError?.();
          reject(error instanceof StoreUnavailableError ? error : new StoreUnavailableError(name, error));
        };
        const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        timer.unref?.();
        let pending: Promise<T>;
        try {
          pending = work();
        } catch (error) {
          fail(error);
          return;
        }
        pending.then((value) => {
          clearTimeout(timer);
          succeeded(call);
          resolve(value);
        }, fail);
      });
    },
  };
}

/**
 * The same object with every method that returns a promise run through the guard; synchronous
 * answers (the memory store's) and other properties pass through untouched.
 */
export function guardMethods<T extends object>(target: T, guard: StoreGuard): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      const value: unknown = Reflect.get(object, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const answer: unknown = (value as (...a: unknown[]) => unknown).apply(object, args);
        return isThenable(answer) ? guard.run(() => Promise.resolve(answer)) : answer;
      };
    },
  });
}
