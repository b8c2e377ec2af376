/**
 * The host's login throttle (docs/oauth.md, "Brute-force limits"): failed sign-ins counted like
 * client authentication's, in process or in the platform's Redis or PostgreSQL store.
 */
import { countedAddress } from '../core/client-address.js';
import { configurationError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { createStoreGuard } from '../core/store-guard.js';
import type { StoreConnection } from '../core/store-connection.js';
import type { RedisOAuthStore } from './store/redis.js';
import type { OAuthStore } from './store/types.js';
import { createFailureThrottle, guardedThrottle, ReservationFailedError } from './throttle.js';

export interface LoginAttempt {
  /** 0 when the password may be checked; otherwise the seconds to wait (answer 429 with Retry-After). */
  readonly retryAfter: number;
  /** The password was right: gives back this attempt's reservation. A wrong password needs no call. */
  succeeded(): Promise<void>;
}

export interface LoginThrottle {
  /**
   * Call before checking the password: reserves one failure for the caller's address with the
   * user name, and one for the address. `ip` is the framework's client address (Express `req.ip`).
   */
  attempt(username: string, ip: string): Promise<LoginAttempt>;
}

export interface LoginThrottleOptions {
  /** Failed logins allowed per address and user name (any case) within the window. Default 5. */
  failures?: number;
  /** Failed logins allowed per address within the window, whatever the user names. Default 100. */
  addressFailures?: number;
  /** Default 900 (15 minutes). */
  windowSeconds?: number;
  /**
   * The platform's OAuth store: on a Redis or PostgreSQL store the counts live there, shared by
   * every process on it. Default: in process memory. On PostgreSQL each count waits for its
   * connection in the pool's local queue (docs/stores.md#the-local-queue); past its bound
   * `attempt()` rejects with a StoreBusyError. On either, `attempt()` rejects with a
   * StoreTimeoutError when the store does not answer by its deadline (1 s, docs/stores.md#deadlines-and-outages),
   * and with a StoreFailedError when it fails.
   */
  store?: OAuthStore;
}

function positiveInteger(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw configurationError('invalid_option', field, 'must be a positive integer (createLoginThrottle)');
  }
  return value;
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
/** The deadline of one login count on a pool, `oauth.storeTimeoutMs`'s default (docs/stores.md#deadlines-and-outages). */
const LOGIN_COUNT_TIMEOUT_MS = 1000;

/**
 * For the host's login page: limits failed logins per address and user name (any case), and per
 * address; an IPv6 address counts by its /56 network.
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
  const onRedis = (options.store as Partial<RedisOAuthStore> | undefined)?.rateLimitStore?.kind === 'redis';
  // A count holds one of the pool's connections: without a deadline, a store that hangs would keep
  // them all for logins, and the platform's calls would wait in the queue for its bound without
  // ever reaching the store to find it down. With the platform's default deadline a hung count
  // gives its place back and the outage is seen and answered 503 (docs/stores.md#the-local-queue).
  // On Redis a client waits for a store that stopped answering as long as it stays silent (its
  // offline queue, a partition): without the deadline the host's login page would hang as long.
  const guard = lane || onRedis ? createStoreGuard({ name: 'login throttle (OAuth store)', timeoutMs: LOGIN_COUNT_TIMEOUT_MS, logger: silentLogger, lane }) : undefined;
  const counting = createFailureThrottle({
    failures: {
      [ADDRESS]: positiveInteger(options.addressFailures ?? 100, 'addressFailures'),
      [ADDRESS_AND_USER]: positiveInteger(options.failures ?? 5, 'failures'),
    },
    windowSeconds: positiveInteger(options.windowSeconds ?? 900, 'windowSeconds'),
    name: 'login',
    store: options.store,
    // On a pool, each count waits for its connection in the pool's local queue like every store call of the platform.
    ...(lane && guard ? { connection: <T>(query: () => Promise<T>) => guard.ask(() => query()) } : {}),
  });
  // On Redis nothing queues locally (one connection carries every call): the attempt as a whole has the deadline.
  const throttle = !lane && guard ? guardedThrottle(counting, guard, 'as-is') : counting;
  return {
    async attempt(username, ip) {
      const address = countedAddress(stringArgument(ip, 'ip'));
      const user = stringArgument(username, 'username').toLowerCase();
      // The address first, as createFailureThrottle asks; JSON keeps the pair apart whatever characters a user name holds.
      const keys = [
        { kind: ADDRESS, id: address },
        { kind: ADDRESS_AND_USER, id: JSON.stringify([address, user]) },
      ];
      const attempt = await throttle.attempt(keys).catch((error: unknown) => {
        // Nobody is answered for an attempt the store failed part-way: what it reserved goes back,
        // and the caller sees the store's error (on Redis and PostgreSQL a StoreTimeoutError or StoreFailedError, on a pool a StoreBusyError too).
        if (!(error instanceof ReservationFailedError)) throw error;
        error.release().catch(() => undefined);
        throw error.cause;
      });
      return { retryAfter: attempt.retryAfter, succeeded: () => attempt.release() };
    },
  };
}
