/**
 * Store writes that must land although the call that made them failed: a brute-force count given
 * back, a refresh token rotation confirmed. Each is tried again when the store's outage ends (a
 * call finds it back, or a probe that tries the oldest waiting write does), or, while no outage is
 * known (a failure the guard did not take for one, a write refused alone), after a pause that
 * doubles, until a moment past which the write changes nothing.
 *
 * A bounded number wait, so that a store that takes reads but refuses writes cannot make the
 * process hold one retry for every call. A write marked `kept` may take the place of the oldest
 * waiting one that is not: callers mark kept the writes strangers cannot cause, so a flood of
 * strangers' writes cannot crowd them out. A write with no place is not tried again.
 *
 * A write may name what it concerns (the brute-force keys a give-back changes): `landing()` tries
 * the waiting writes that concern something at once, and tells when they and the tries of such
 * writes under way have settled, so a reader of those keys need not take owed writes for undone.
 */
import type { StoreGuard } from './store-guard.js';

export interface RetryWhenBackOptions {
  /** Writes waiting to be tried again, at most. */
  maxPending: number;
}

/** The pause before a failed write is tried again, and before the first probe; it doubles with each pause. */
const FIRST_PAUSE_MS = 100;
/** The longest pause while no outage is known: tens of tries in a minute, not thousands. */
const LONGEST_PAUSE_MS = 10_000;

export interface RetryWhenBack {
  /**
   * Runs `write`; settles as its first try does. If that fails, it is tried again as above until
   * `until` (a `performance.now()` time) has passed or one try lands. `concerns` names what the
   * write changes, for `landing()`.
   */
  run(write: () => Promise<unknown>, until: number, kept: boolean, concerns?: readonly string[]): Promise<void>;
  /**
   * Undefined when no write that concerns any of `concerns` is owed (waiting, or under way).
   * Otherwise those waiting are tried now, and the answer settles (never rejects) once every such
   * try has landed or failed.
   */
  landing(concerns: readonly string[]): Promise<void> | undefined;
}

/** A write waiting for its next try. */
interface Waiting {
  /** Forgets it: its timer or its turn when the store is back. */
  cancel(): void;
  /** Its next try, now: settles as that try does; undefined when its moment has passed. */
  tryNow(): Promise<void> | undefined;
}

/** A write that names its concerns, from its first try until it lands or is given up. */
interface Owed {
  readonly concerns: readonly string[];
  /** The try under way, settling (never rejecting) with it; undefined while waiting. */
  trying: Promise<void> | undefined;
  /** While it waits for its next try. */
  waiting: Waiting | undefined;
}

const settle = () => undefined;

/**
 * The longest pause between two probes of a store known to be down: one store call a second per
 * retrier at most, and a count another process owes a give-back for stands at most about this
 * long once the store is back.
 */
export const PROBE_LONGEST_PAUSE_MS = 1000;

export function retryWhenBack(guard: Pick<StoreGuard, 'degraded' | 'whenBack'>, options: RetryWhenBackOptions): RetryWhenBack {
  const { maxPending } = options;
  // Each waiting write's `cancel` forgets it; a Set keeps the order they came in, oldest first.
  const kept = new Set<Waiting>();
  const others = new Set<Waiting>();
  const owed = new Set<Owed>();
  const makeRoom = (isKept: boolean): boolean => {
    if (kept.size + others.size < maxPending) return true;
    const oldest = isKept ? others.values().next().value : undefined;
    if (oldest === undefined) return false;
    oldest.cancel();
    others.delete(oldest);
    return true;
  };
  // During an outage the waiting writes are tried when a call of the guard finds the store back.
  // A process that makes no other call would never find it, and the writes would wait until their
  // moment passed (a count left standing locks a user out for its whole window, and other
  // processes sharing the store read it): so one probe at a time tries the oldest waiting write,
  // after a pause that doubles up to PROBE_LONGEST_PAUSE_MS. Once one lands, the store is back and
  // every waiting write is tried.
  let probe: ReturnType<typeof setTimeout> | undefined;
  let probePauseMs = FIRST_PAUSE_MS;
  const probeLater = (): void => {
    if (probe !== undefined) return;
    probe = setTimeout(() => {
      probe = undefined;
      const oldest: Waiting | undefined = kept.values().next().value ?? others.values().next().value;
      if (oldest === undefined || !guard.degraded) {
        probePauseMs = FIRST_PAUSE_MS;
        return;
      }
      probePauseMs = Math.min(2 * probePauseMs, PROBE_LONGEST_PAUSE_MS);
      const tried = oldest.tryNow();
      // Its moment had passed: probe with the next one. A try that fails waits again and asks for a probe.
      if (tried === undefined) return probeLater();
      tried.then(() => {
        probePauseMs = FIRST_PAUSE_MS;
        for (const waiting of [...kept, ...others]) waiting.tryNow()?.catch(settle);
      }, settle);
    }, probePauseMs);
    probe.unref();
  };
  const attempt = (write: () => Promise<unknown>, until: number, isKept: boolean, pauseMs: number, debt?: Owed): Promise<void> => {
    const tried = write().then(
      () => {
        if (debt) owed.delete(debt);
      },
      (error: unknown) => {
        if (!makeRoom(isKept)) {
          if (debt) owed.delete(debt);
          throw error;
        }
        const held = isKept ? kept : others;
        let next = () => {};
        const retry = (nextPauseMs: number): Promise<void> | undefined => {
          held.delete(waiting);
          if (debt) debt.waiting = undefined;
          if (performance.now() < until) return attempt(write, until, isKept, nextPauseMs, debt);
          if (debt) owed.delete(debt);
          return undefined;
        };
        const waiting: Waiting = {
          cancel: () => {
            // Crowded out: never tried again, so nothing is owed any more.
            next();
            if (debt) owed.delete(debt);
          },
          tryNow: () => {
            next();
            return retry(pauseMs);
          },
        };
        held.add(waiting);
        if (guard.degraded) {
          next = guard.whenBack(() => retry(pauseMs)?.catch(settle));
          probeLater();
        } else {
          const timer = setTimeout(() => retry(Math.min(2 * pauseMs, LONGEST_PAUSE_MS))?.catch(settle), Math.min(pauseMs, until - performance.now()));
          timer.unref();
          next = () => clearTimeout(timer);
        }
        if (debt) {
          debt.trying = undefined;
          debt.waiting = waiting;
        }
        throw error;
      },
    );
    if (debt) debt.trying = tried.then(settle, settle);
    return tried;
  };
  return {
    run(write, until, isKept, concerns) {
      if (concerns === undefined || concerns.length === 0) return attempt(write, until, isKept, FIRST_PAUSE_MS);
      const debt: Owed = { concerns, trying: undefined, waiting: undefined };
      owed.add(debt);
      return attempt(write, until, isKept, FIRST_PAUSE_MS, debt);
    },
    landing(concerns) {
      const wanted = new Set(concerns);
      const mine = [...owed].filter((debt) => debt.concerns.some((concern) => wanted.has(concern)));
      if (mine.length === 0) return undefined;
      for (const debt of mine) debt.waiting?.tryNow()?.catch(settle);
      return Promise.all(mine.map((debt) => debt.trying)).then(settle);
    },
  };
}
