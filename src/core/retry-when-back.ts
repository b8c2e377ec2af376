/**
 * Store writes that must land although the call that made them failed: a brute-force count given
 * back, a refresh token rotation confirmed. Each is tried again when the store's outage ends, or,
 * while no outage is known (a failure the guard did not take for one, a write refused alone),
 * after a pause that doubles, until a moment past which the write changes nothing.
 *
 * A bounded number wait, so that a store that takes reads but refuses writes cannot make the
 * process hold one retry for every call. A write marked `kept` may take the place of the oldest
 * waiting one that is not: callers mark kept the writes strangers cannot cause, so a flood of
 * strangers' writes cannot crowd them out. A write with no place is not tried again.
 */
import type { StoreGuard } from './store-guard.js';

export interface RetryWhenBackOptions {
  /** Writes waiting to be tried again, at most. */
  maxPending: number;
  /** The first pause while no outage is known (ms); it doubles up to `longestPauseMs`. */
  firstPauseMs: number;
  longestPauseMs: number;
}

export interface RetryWhenBack {
  /**
   * Runs `write`; settles as its first try does. If that fails, it is tried again as above until
   * `until` (a `performance.now()` time) has passed or one try lands.
   */
  run(write: () => Promise<unknown>, until: number, kept: boolean): Promise<void>;
}

export function retryWhenBack(guard: Pick<StoreGuard, 'degraded' | 'whenBack'>, options: RetryWhenBackOptions): RetryWhenBack {
  const { maxPending, firstPauseMs, longestPauseMs } = options;
  // Each waiting write's `cancel` forgets it; a Set keeps the order they came in, oldest first.
  const kept = new Set<{ cancel: () => void }>();
  const others = new Set<{ cancel: () => void }>();
  const makeRoom = (isKept: boolean): boolean => {
    if (kept.size + others.size < maxPending) return true;
    const oldest = isKept ? others.values().next().value : undefined;
    if (oldest === undefined) return false;
    oldest.cancel();
    others.delete(oldest);
    return true;
  };
  const attempt = (write: () => Promise<unknown>, until: number, isKept: boolean, pauseMs: number): Promise<void> =>
    write().then(
      () => undefined,
      (error: unknown) => {
        if (!makeRoom(isKept)) throw error;
        const held = isKept ? kept : others;
        const waiting = { cancel: () => {} };
        const retry = (nextPauseMs: number) => {
          held.delete(waiting);
          if (performance.now() < until) attempt(write, until, isKept, nextPauseMs).catch(() => undefined);
        };
        held.add(waiting);
        if (guard.degraded) waiting.cancel = guard.whenBack(() => retry(pauseMs));
        else {
          const timer = setTimeout(() => retry(Math.min(2 * pauseMs, longestPauseMs)), Math.min(pauseMs, until - performance.now()));
          timer.unref();
          waiting.cancel = () => clearTimeout(timer);
        }
        throw error;
      },
    );
  return { run: (write, until, isKept) => attempt(write, until, isKept, firstPauseMs) };
}
