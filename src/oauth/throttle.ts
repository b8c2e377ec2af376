import { createHash, randomUUID } from 'node:crypto';
import { configurationError } from '../core/errors.js';
import { retryWhenBack } from '../core/retry-when-back.js';
import type { StoreCall, StoreGuard } from '../core/store-guard.js';
import { failureWindows, type FailureWindow, type FailureWindows } from './failure-windows.js';
import type { OAuthStore } from './store/types.js';

/**
 * Brute-force protection. Every attempt reserves one failure on each of its keys (an IP, an IP
 * with a client id or a user name) before the secret is checked, so concurrent guesses cannot
 * pass the limit together; a success, or a refusal that checked nothing, gives back only its own
 * reservation, so it never erases failures that other attempts made. Keys are counted whether the
 * client or user exists or not, so a refusal reveals nothing. An attempt is counted by its own
 * random id (failure-windows.ts): a reservation or give-back sent twice lands once, and an
 * attempt that lost a reservation's answer gives back every key it tried.
 */
export interface ThrottledAttempt {
  /** 0 when the secret may be checked; otherwise the seconds to wait (answer 429 with Retry-After). */
  readonly retryAfter: number;
  /**
   * Gives back this attempt's reservations, once: when the secret was right (or never checked),
   * or when nobody was answered for the attempt. A refusal has already given back its own.
   */
  release(): Promise<void>;
  /** A refusal whose give-back the store did not take: `release()` is still owed. */
  readonly owed?: boolean;
  /** When (performance.now()) every window this attempt was counted in has ended: a give-back changes nothing after. */
  readonly countedUntil: number;
}

/** One count an attempt goes through: `kind` names its limit in `FailureThrottleOptions.failures`. */
export interface CountedKey {
  readonly kind: string;
  readonly id: string;
}

/** What an attempt reserves, to give back before the attempt has settled. */
export interface Reserved {
  /**
   * Gives back every key a reservation was sent for so far, answered or not: where the count has
   * not landed yet, it counts nothing when it does (failure-windows.ts).
   */
  release(): Promise<void>;
  /** As ThrottledAttempt's, for the reservations sent so far: before the first, it has passed. */
  readonly countedUntil: number;
}

export interface AttemptWatch {
  /** Once aborted the attempt reserves nothing more (and fails). */
  readonly abandoned?: AbortSignal;
  /** Hears each step the store answered. */
  answered?(): void;
  /** Hears, as the attempt starts, what it reserves, before any reservation is sent. */
  reserving?(reserved: Reserved): void;
}

export interface FailureThrottle {
  /** Keys are checked and reserved in the given order: put the caller's IP first. */
  attempt(keys: readonly CountedKey[], watch?: AttemptWatch): Promise<ThrottledAttempt>;
}

export interface FailureThrottleOptions {
  /** Failures allowed within the window, per key of each kind. */
  failures: Readonly<Record<string, number>>;
  /** Fixed from the first failure a key counts (docs/oauth.md, "Brute-force limits"). */
  windowSeconds: number;
  /** Names the windows, so two throttles on one store keep apart. */
  name: string;
  /** Count on this store's Redis or PostgreSQL, shared by every process on it; else in memory. */
  store?: OAuthStore;
}

/** Fixed length whatever the caller sent, and no user name or IP in the clear. */
const storedKey = (key: string) => createHash('sha256').update(key).digest('base64url');

const secondsUntil = (ms: number) => Math.max(Math.ceil(ms / 1000), 1);

function limitOf(failures: FailureThrottleOptions['failures'], kind: string): number {
  const limit = failures[kind];
  if (limit === undefined) throw configurationError('invalid_argument', 'kind', `the brute-force limit has no failures configured for keys of kind ${kind}`);
  return limit;
}

export function createFailureThrottle({ failures, windowSeconds, name, store }: FailureThrottleOptions): FailureThrottle {
  return countFailures(failures, failureWindows(store, name, windowSeconds * 1000));
}

/** The throttle on windows of the caller's choosing: createFailureThrottle picks them from the store. */
export function countFailures(failures: FailureThrottleOptions['failures'], windows: FailureWindows): FailureThrottle {
  return {
    async attempt(counted, { abandoned, answered, reserving } = {}) {
      const limits = counted.map(({ kind }) => limitOf(failures, kind));
      const keys = counted.map(({ kind, id }) => storedKey(`${kind}:${id}`));
      const attemptId = randomUUID();
      // Every key a reservation was sent for, answered or not: giving back where it never landed changes nothing.
      const tried = new Set<string>();
      const release = () => giveBack(windows, tried, attemptId);
      // A window ends at most its length after the count that started it, which came no sooner than it was sent.
      let countedUntil = performance.now();
      reserving?.({
        release,
        get countedUntil() {
          return countedUntil;
        },
      });
      // A key already at its limit refuses without touching any count, so a blocked IP cannot
      // run up the counts of the other keys it names. Every step reads one key after the other:
      // an attempt holds one connection of a pool at a time (docs/stores.md#the-local-queue).
      const states: (FailureWindow | null)[] = [];
      for (const key of keys) {
        states.push(await windows.peek(key));
        answered?.();
      }
      const blocked = states.filter((state, i) => state !== null && state.count >= limits[i]! && state.msLeft > 0);
      if (blocked.length > 0) {
        return { retryAfter: secondsUntil(Math.max(...blocked.map((state) => state!.msLeft))), release: async () => {}, countedUntil: performance.now() };
      }
      // One key after the other: an attempt that loses the race for the limit on a key has
      // reserved nothing on the keys after it, and gives back what it reserved before: it
      // checked no secret, so it is no failure.
      // A store failure rejects the attempt as it is: what it reserved is given back through
      // `reserving`'s release, which its caller holds from the start.
      for (const [i, key] of keys.entries()) {
        // Nobody waits for this attempt any more (its deadline passed): reserve nothing more.
        if (abandoned?.aborted) throw abandoned.reason;
        tried.add(key);
        countedUntil = performance.now() + windows.windowMs;
        const reservation = await windows.reserve(key, attemptId);
        answered?.();
        if (reservation.count > limits[i]!) {
          const owed = await release().then(
            () => false,
            () => true,
          );
          return { retryAfter: secondsUntil(reservation.msLeft), release, owed, countedUntil };
        }
      }
      return { retryAfter: 0, release, countedUntil };
    },
  };
}

/**
 * Gives the attempt back on each key; a key leaves `pending` once its give-back was answered. A
 * give-back is idempotent, so a retry running while an earlier one is still under way (its
 * deadline passed) may send it again: it lands once.
 */
async function giveBack(windows: FailureWindows, pending: Set<string>, attemptId: string): Promise<void> {
  let failed = false;
  let failure: unknown;
  for (const key of [...pending]) {
    try {
      await windows.giveBack(key, attemptId);
      pending.delete(key);
    } catch (error) {
      if (!failed) [failed, failure] = [true, error];
    }
  }
  if (failed) throw failure;
}

/** Settles as `work` does, or resolves after `ms` while `work` goes on, whichever comes first. */
export function atMost(ms: number, work: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
  return Promise.race([work, waited]).finally(() => clearTimeout(timer));
}

/**
 * Failed give-backs waiting to be tried again, per throttle, at most: a store that takes reads but
 * refuses writes fails every attempt's give-back, and a flood of attempts must not make the
 * process hold one retry for each. When they are all held, a right secret's give-back takes the
 * place of the oldest other one (a refusal's, or an attempt nobody was answered for), which anyone
 * can cause without a credential: so strangers cannot crowd out the give-backs that keep a user
 * from being locked out. A give-back with no place is not tried again: its count ends with its window.
 */
export const MAX_PENDING_GIVE_BACKS = 10_000;

/**
 * The throttle's windows live in the platform's store: its calls get the store's deadline and
 * outage log (docs/stores.md#deadlines-and-outages). A reservation the outage kept from being
 * given back (or that landed after its deadline, or whose answer was lost) is given back when
 * the store is back, so an outage does not count as failures and lock anyone out. On a pool an attempt is one store call:
 * it starts once the pool's local queue gives it a connection, so its deadline counts the store's
 * time, not the wait in line, and one shed by a full queue is load (store_busy), not an outage.
 * Its queries run one after another, one connection at a time. `failures` says how a
 * failed call rejects: `'unavailable'` as a 503 StoreUnavailableError (the platform's endpoints),
 * `'as-is'` with the guard's StoreTimeoutError, StoreFailedError or StoreBusyError.
 */
export function guardedThrottle(
  throttle: FailureThrottle,
  guard: StoreGuard,
  failures: 'unavailable' | 'as-is' = 'unavailable',
  maxPending = MAX_PENDING_GIVE_BACKS,
): FailureThrottle {
  const call = <T>(work: (step: StoreCall) => Promise<T>): Promise<T> => (failures === 'unavailable' ? guard.run(work) : guard.ask(work));
  // A give-back is tried again until the windows it would change have ended, however often the
  // store fails it (a connection that keeps breaking fails many in a row): after that the count
  // is gone anyway. A right secret's give-back is kept over the others, which anyone can cause
  // without a credential (MAX_PENDING_GIVE_BACKS).
  const giveBacks = retryWhenBack(guard, { maxPending });
  const releaseWhenBack = (release: () => Promise<void>, countedUntil: number, rightSecret: boolean, concerns: readonly string[]): Promise<void> =>
    giveBacks.run(() => call(release), countedUntil, rightSecret, concerns);
  const once = (names: readonly CountedKey[], concerns: readonly string[]): Promise<ThrottledAttempt> => {
    const abandoned = new AbortController();
    // Nothing reaches the store before the guard lets the call start.
    let reserved: Reserved | undefined;
    // An attempt is several store steps in a row: each one the store answers starts the
    // deadline again, so a store that answers every step in time is slow, not down
    // (docs/stores.md#deadlines-and-outages).
    const reserving = (what: Reserved) => (reserved = what);
    return call((step) => throttle.attempt(names, { abandoned: abandoned.signal, answered: () => step.sent(), reserving })).then(
      (attempt) => {
        // A refusal checked no secret: a give-back the store failed right then is made once it answers.
        if (attempt.owed) releaseWhenBack(() => attempt.release(), attempt.countedUntil, false, concerns).catch(() => undefined);
        // A right secret's caller is answered once its give-back lands, or at the store's
        // deadline while the give-back goes on: waiting in a pool's queue has no deadline of its own.
        const release = () => atMost(guard.timeoutMs, releaseWhenBack(() => attempt.release(), attempt.countedUntil, true, concerns));
        return { retryAfter: attempt.retryAfter, release, countedUntil: attempt.countedUntil };
      },
      (error: unknown) => {
        abandoned.abort(error);
        // Late, or failed part-way: nobody was answered for this attempt, so every key it sent
        // a reservation for is given back now (it sends none from here on). Not once its
        // reservations settle: a client may hold one it never settles (a connection dropped,
        // with no resend), and a count that lands after its give-back counts nothing.
        const what = reserved;
        if (what && performance.now() < what.countedUntil) releaseWhenBack(() => what.release(), what.countedUntil, false, concerns).catch(() => undefined);
        throw error;
      },
    );
  };
  return {
    attempt(names) {
      const concerns = names.map(({ kind, id }) => `${kind}:${id}`);
      return once(names, concerns).then(async (attempt) => {
        // A refusal read counts that may still hold attempts this process owes give-backs for
        // (answered 503 while the store stalled, their counts landing as it came back): the
        // give-backs wait for the store to answer a call, and this attempt's was often the first.
        // They are made now, and the attempt is judged once more on what they leave: an outage
        // never counts as failures. A refusal with nothing owed on its keys stands.
        if (attempt.retryAfter === 0) return attempt;
        const owed = giveBacks.landing(concerns);
        if (owed === undefined) return attempt;
        await atMost(guard.timeoutMs, owed);
        return once(names, concerns);
      });
    },
  };
}
