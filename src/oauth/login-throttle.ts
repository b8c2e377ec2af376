/**
 * The host's login throttle (docs/oauth.md, "Brute-force limits"): failed sign-ins counted like
 * client authentication's, in process or in the platform's Redis or PostgreSQL store, with the
 * addresses that signed a user in known to that user as client authentication knows its callers.
 */
import { configurationError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { createStoreGuard } from '../core/store-guard.js';
import type { StoreConnection } from '../core/store-connection.js';
import { sharedWindowsOf } from './failure-windows.js';
import { callerAt, KNOWN_CALLERS_PER_CLIENT, knownCallerMarks, knownCallers, ownAddress, type Caller, type MarkCalls } from './known-callers.js';
import type { OAuthStore } from './store/types.js';
import { atMost, createFailureThrottle, guardedThrottle, type CountedKey, type ThrottledAttempt } from './throttle.js';

export interface LoginAttempt {
  /** 0 when the password may be checked; otherwise the seconds to wait (answer 429 with Retry-After). */
  readonly retryAfter: number;
  /**
   * The password was right: gives back this attempt's reservation, and marks the caller's IPv6
   * address as known to the user name (docs/oauth.md#brute-force-limits). A wrong password needs
   * no call. Never rejects: when the store cannot take the give-back now, it is given back once
   * the store answers again; a mark it cannot take is written at the next sign-in.
   */
  succeeded(): Promise<void>;
}

export interface LoginThrottle {
  /**
   * Call before checking the password: reserves one failure for the caller's address with the
   * user name, and one for the address. `ip` is the framework's client address (Express `req.ip`).
   * An IPv6 address is counted by its /56; while that count is at its limit, an address known to
   * the user name is counted on its own.
   */
  attempt(username: string, ip: string): Promise<LoginAttempt>;
}

export interface LoginThrottleOptions {
  /**
   * Failed logins allowed per address and user name within the window. Default 5. Case, Unicode
   * compatibility forms, invisible characters and extra spaces make no new name.
   */
  failures?: number;
  /** Failed logins allowed per address within the window, whatever the user names. Default 100. */
  addressFailures?: number;
  /** Default 900 (15 minutes). */
  windowSeconds?: number;
  /**
   * The platform's OAuth store: on a Redis or PostgreSQL store the counts live there, shared by
   * every process on it. Default: in process memory. On a PostgreSQL pool each attempt waits for
   * one connection in the pool's local queue (docs/stores.md#the-local-queue); past its bound
   * `attempt()` rejects with a StoreBusyError. On either, `attempt()` rejects with a
   * StoreTimeoutError when the store does not answer by its deadline (1 s, docs/stores.md#deadlines-and-outages),
   * and with a StoreFailedError when it fails; what such an attempt had counted, or counts
   * later, is given back once the store answers, so an outage never counts as failed logins.
   */
  store?: OAuthStore;
  /**
   * How long an address that signed a user in stays known to that user name, in seconds, from its
   * latest sign-in: while others' failures hold its IPv6 /56 at the limit, it is counted on its own
   * address. Default 86400 (24 hours), at most 2592000 (30 days), as client authentication's
   * `oauth.bruteForce.knownCallerSeconds`.
   */
  knownCallerSeconds?: number;
}

function positiveInteger(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw configurationError('invalid_option', field, 'must be a positive integer (createLoginThrottle)');
  }
  return value;
}

/** `knownCallerSeconds` at most, as `oauth.bruteForce.knownCallerSeconds`. */
const MAX_KNOWN_CALLER_SECONDS = 30 * 24 * 3600;

function knownCallerSeconds(value: unknown): number {
  const seconds = positiveInteger(value, 'knownCallerSeconds');
  if (seconds > MAX_KNOWN_CALLER_SECONDS) throw configurationError('invalid_option', 'knownCallerSeconds', `must be at most ${MAX_KNOWN_CALLER_SECONDS} (createLoginThrottle)`);
  return seconds;
}

function stringArgument(value: unknown, argument: string): string {
  if (typeof value !== 'string') {
    throw configurationError('invalid_argument', argument, `must be a string (LoginThrottle.attempt), got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value;
}

/**
 * The login counts follow client authentication's (docs/oauth.md, "Brute-force limits"): per
 * address and user name, so a guesser slows itself down and never the user it guesses at, and
 * per address, so one address trying many user names is slowed too. No count is kept per user
 * name alone: anyone who knows a user name could spend it and lock the user out.
 */
const ADDRESS = 'ip';
const ADDRESS_AND_USER = 'ip+user';
/** The deadline of one login attempt on a shared store, `oauth.storeTimeoutMs`'s default (docs/stores.md#deadlines-and-outages). */
const LOGIN_COUNT_TIMEOUT_MS = 1000;

/**
 * Characters of a user name that are counted: Unicode normalisation is quadratic in a run of
 * combining marks (64 KB of them take over a second), and no user name is this long. Names that
 * share their first COUNTED_NAME_LENGTH characters share a count, which only makes it stricter.
 */
const COUNTED_NAME_LENGTH = 256;

/**
 * The user name as counted: case, Unicode compatibility forms (NFKC: a fullwidth `ｂｏｂ` is
 * `bob`), invisible characters and surrounding or repeated spaces make no new name, so a guesser
 * cannot get a fresh count per spelling of a name the host's lookup would read as one.
 */
function countedUserName(username: string): string {
  const trimmed = username.trim();
  const head = trimmed.length > COUNTED_NAME_LENGTH ? `${trimmed.slice(0, COUNTED_NAME_LENGTH)}\u2026` : trimmed;
  return head
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .replace(/\s+/gu, ' ')
    .trim()
    // Through upper case first, so the case forms lower case alone keeps apart meet: `ß` and
    // `ss`, a final `ς` and `σ`.
    .toUpperCase()
    .toLowerCase();
}

/**
 * For the host's login page: limits failed logins per address and user name (any case), and per
 * address, an IPv6 address by its /56 network but for the ranges docs/oauth.md#brute-force-limits lists.
 *
 * @example
 * const logins = createLoginThrottle({ store }); // the platform's OAuth store
 * const attempt = await logins.attempt(username, req.ip);
 * if (attempt.retryAfter > 0) return res.status(429).set('Retry-After', String(attempt.retryAfter)).send('Too many attempts');
 * if (!valid) return res.status(401).send('Wrong user name or password'); // the attempt stays counted
 * await attempt.succeeded();
 */
export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const lane = (options.store as { connection?: StoreConnection } | undefined)?.connection?.lane;
  // The Redis and PostgreSQL stores say where the counts live; in memory nothing can fail or hang.
  const sharedWindows = sharedWindowsOf(options.store);
  const shared = sharedWindows !== undefined;
  const counting = createFailureThrottle({
    failures: {
      [ADDRESS]: positiveInteger(options.addressFailures ?? 100, 'addressFailures'),
      [ADDRESS_AND_USER]: positiveInteger(options.failures ?? 5, 'failures'),
    },
    windowSeconds: positiveInteger(options.windowSeconds ?? 900, 'windowSeconds'),
    name: 'login',
    store: options.store,
  });
  const markLifetimeMs = knownCallerSeconds(options.knownCallerSeconds ?? 24 * 3600) * 1000;
  // An attempt is one store call with the platform's default deadline, like client
  // authentication's (docs/stores.md#deadlines-and-outages). On a pool it takes one connection
  // from the pool's local queue for the whole attempt, and its deadline starts there: past it the
  // attempt gives back its place in the queue, so the platform's calls still reach the store,
  // find it down and answer 503 (docs/stores.md#the-local-queue). On Redis a client waits for a store
  // that stopped answering as long as it stays silent (its offline queue, a partition): without
  // the deadline the host's login page would hang as long. A count that landed late or part-way
  // is given back once the store answers, so an outage never counts as failed logins.
  const guard = shared ? createStoreGuard({ name: 'login throttle (OAuth store)', timeoutMs: LOGIN_COUNT_TIMEOUT_MS, logger: silentLogger, lane }) : undefined;
  const throttle = guard ? guardedThrottle(counting, guard, 'as-is') : counting;
  // The marks' calls fail as the counts' do (a StoreTimeoutError, StoreFailedError or StoreBusyError).
  const calls: MarkCalls = guard ? { run: (work) => guard.ask(work) } : { run: (work) => work() };
  // A shared store's marks end on the store's clock: this process's copy of them ages on it too.
  const now = sharedWindows ? () => sharedWindows.now() : () => performance.now();
  const known = knownCallers(knownCallerMarks(options.store, { lifetimeMs: markLifetimeMs, most: KNOWN_CALLERS_PER_CLIENT, name: 'login', now }), calls, {
    lifetimeMs: markLifetimeMs,
    now,
  });

  /**
   * The attempt, counted on the caller's /56. When others' failures filled that count, an address
   * that signed this user in recently is counted on its own instead: a neighbour in the /56 (a
   * mobile carrier's or a hosting provider's other customer) never locks the user out of it.
   * Nobody becomes known without the password, and an address that is not known meets the /56's
   * refusal, which checks no password, so guesses spread over the /56 stay bounded and the
   * answer to a right password from it tells nothing.
   */
  const attemptFor = async (caller: Caller, user: string): Promise<ThrottledAttempt> => {
    const attempt = await throttle.attempt(countedKeys(caller.counted, user));
    if (attempt.retryAfter === 0 || !ownAddress(caller)) return attempt;
    if (!(await known.isKnown(user, caller.exact))) return attempt;
    return throttle.attempt(countedKeys(caller.exact, user));
  };

  return {
    async attempt(username, ip) {
      const given = stringArgument(ip, 'ip');
      const caller = callerAt(given);
      const user = countedUserName(stringArgument(username, 'username'));
      const attempt = await attemptFor(caller, user);
      return {
        retryAfter: attempt.retryAfter,
        // The password was right whatever the store does now: the login goes on. A give-back the
        // store cannot take is tried again once it answers (guardedThrottle), never the host's error,
        // and one the store is slow to take holds the sign-in no longer than the store's deadline;
        // the mark, written beside it, neither (one the store fails is written at the next sign-in).
        // A refused attempt checked no password: it marks nothing, whatever its caller says.
        succeeded: async () => {
          const giveBack = attempt.release().catch(() => undefined);
          const mark = attempt.retryAfter === 0 && ownAddress(caller) ? atMost(LOGIN_COUNT_TIMEOUT_MS, known.proved(user, caller.exact)) : undefined;
          await Promise.all([giveBack, mark]);
        },
      };
    },
  };
}

/** The address first, as createFailureThrottle asks; JSON keeps the pair apart whatever characters a user name holds. */
function countedKeys(address: string, user: string): CountedKey[] {
  return [
    { kind: ADDRESS, id: address },
    { kind: ADDRESS_AND_USER, id: JSON.stringify([address, user]) },
  ];
}
