import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { configurationError } from '../core/errors.js';
import type { StoreGuard } from '../core/store-guard.js';
import type { PostgresOAuthStore, PostgresRateLimitStore } from './store/postgres.js';
import type { RedisOAuthStore, RedisRateLimitStore } from './store/redis.js';
import type { OAuthStore } from './store/types.js';

/**
 * Brute-force protection built on rate-limiter-flexible. Every attempt reserves one failure on
 * each of its keys (an IP, an IP with a client id or a user name) before the secret is checked, so
 * concurrent guesses cannot pass the limit together; a success, or a refusal that checked nothing,
 * gives back only its own reservation, so it never erases failures that other attempts made. Keys
 * are counted whether the client or user exists or not, so a refusal reveals nothing.
 */
export interface ThrottledAttempt {
  /** 0 when the secret may be checked; otherwise the seconds to wait (answer 429 with Retry-After). */
  readonly retryAfter: number;
  /**
   * Gives back this attempt's reservations, once: when the secret was right (or never checked),
   * or when nobody was answered for the attempt. A refusal has already given back its own.
   */
  release(): Promise<void>;
}

/** One count an attempt goes through: `kind` names its limit in `FailureThrottleOptions.failures`. */
export interface CountedKey {
  readonly kind: string;
  readonly id: string;
}

export interface FailureThrottle {
  /**
   * Keys are checked and reserved in the given order: put the caller's IP first. Once
   * `abandoned` is aborted the attempt reserves nothing more (and fails).
   */
  attempt(keys: readonly CountedKey[], abandoned?: AbortSignal): Promise<ThrottledAttempt>;
}

export interface FailureThrottleOptions {
  /** Failures allowed within the window, per key of each kind. */
  failures: Readonly<Record<string, number>>;
  windowSeconds: number;
  /** Names the counters, so two throttles on one store keep apart. */
  name: string;
  /** Count on this store's Redis or PostgreSQL, shared by every process on it; else in memory. */
  store?: OAuthStore;
}

/** The limiter's table, in the PostgreSQL store's schema. */
const RATE_LIMIT_TABLE = 'oauth_rate_limits';

interface Limits {
  points: number;
  duration: number;
  keyPrefix: string;
}

type LimiterSource = () => Promise<RateLimiterAbstract>;

function memoryLimiter(base: Limits): LimiterSource {
  const limiter = Promise.resolve(new RateLimiterMemory(base));
  return () => limiter;
}

function redisLimiter(base: Limits, shared: RedisRateLimitStore): LimiterSource {
  const client = shared.client as Partial<Record<'multi' | 'defineCommand', unknown>>;
  if (typeof client.multi !== 'function' || typeof client.defineCommand !== 'function') {
    throw configurationError('invalid_option', 'client', 'the brute-force limits need an ioredis Redis or Cluster (with multi and defineCommand) as the client of createRedisOAuthStore');
  }
  const limiter = Promise.resolve(new RateLimiterRedis({ ...base, storeClient: client, keyPrefix: `${shared.keyPrefix}limits:${base.keyPrefix}` }));
  return () => limiter;
}

/**
 * The table is created (by rate-limiter-flexible, unless the store leaves migrations to the
 * operator) once the store's own migration has made the schema. A failed start is retried by the
 * next attempt. Statement names are dropped: pg refuses one name for two texts on a connection,
 * which two schemas on one pool would otherwise do.
 */
function postgresLimiter(base: Limits, shared: PostgresRateLimitStore): LimiterSource {
  const storeClient = { query: ({ text, values }: { text: string; values?: unknown[] }) => shared.pool.query(text, values) };
  let limiter: Promise<RateLimiterAbstract> | undefined;
  const start = async () => {
    await shared.ready();
    let created: RateLimiterPostgres | undefined;
    await new Promise<void>((resolve, reject) => {
      const options = { ...base, storeClient, storeType: 'pool', schemaName: shared.schema, tableName: RATE_LIMIT_TABLE, tableCreated: !shared.createTable };
      created = new RateLimiterPostgres(options, (error?: unknown) => (error ? reject(error) : resolve()));
    });
    return created!;
  };
  return () => {
    limiter ??= start().catch((error: unknown) => {
      limiter = undefined;
      throw error;
    });
    return limiter;
  };
}

/** Fixed length whatever the caller sent (PostgreSQL keys are varchar(255)), and no user name or IP in the clear. */
const storedKey = (key: string) => createHash('sha256').update(key).digest('base64url');

const secondsUntil = (ms: number) => Math.max(Math.ceil(ms / 1000), 1);

function limitOf(failures: FailureThrottleOptions['failures'], kind: string): number {
  const limit = failures[kind];
  if (limit === undefined) throw configurationError('invalid_argument', 'kind', `the brute-force limit has no failures configured for keys of kind ${kind}`);
  return limit;
}

export function createFailureThrottle({ failures, windowSeconds, name, store }: FailureThrottleOptions): FailureThrottle {
  // Each kind of key has its own limit, compared below: the limiter's points only count.
  const base: Limits = { points: Math.max(...Object.values(failures)), duration: windowSeconds, keyPrefix: name };
  // The Redis and PostgreSQL stores say where they let the limits count; other stores do not.
  const shared = (store as Partial<RedisOAuthStore | PostgresOAuthStore> | undefined)?.rateLimitStore;
  const limiter =
    shared?.kind === 'redis' ? redisLimiter(base, shared) : shared?.kind === 'postgres' ? postgresLimiter(base, shared) : memoryLimiter(base);
  return {
    async attempt(counted, abandoned) {
      const limits = counted.map(({ kind }) => limitOf(failures, kind));
      const counters = await limiter();
      const keys = counted.map(({ kind, id }) => storedKey(`${kind}:${id}`));
      // A key already at its limit refuses without touching any count, so a blocked IP cannot
      // run up the counts of the other keys it names. Every step reads one key after the other:
      // an attempt holds one connection of a pool at a time (docs/stores.md#the-local-queue).
      const states: Awaited<ReturnType<RateLimiterAbstract['get']>>[] = [];
      for (const key of keys) states.push(await counters.get(key));
      const blocked = states.filter((state, i) => state !== null && state.consumedPoints >= limits[i]! && state.msBeforeNext > 0);
      if (blocked.length > 0) return { retryAfter: secondsUntil(Math.max(...blocked.map((state) => state!.msBeforeNext))), release: async () => {} };
      // One key after the other: an attempt that loses the race for the limit on a key has
      // reserved nothing on the keys after it, and gives back what it reserved before: it
      // checked no secret, so it is no failure.
      const reserved = new Set<string>();
      const release = () => giveBack(counters, reserved);
      try {
        for (const [i, key] of keys.entries()) {
          // Nobody waits for this attempt any more (its deadline passed): reserve nothing more.
          if (abandoned?.aborted) throw abandoned.reason;
          const reservation = await counters.penalty(key);
          reserved.add(key);
          if (reservation.consumedPoints > limits[i]!) {
            await release().catch(() => undefined);
            return { retryAfter: secondsUntil(reservation.msBeforeNext), release };
          }
        }
      } catch (error) {
        throw new ReservationFailedError(error, release);
      }
      return { retryAfter: 0, release };
    },
  };
}

/** Gives back each reserved key once; a key whose give-back failed (the store was down) stays, to be retried. */
async function giveBack(counters: RateLimiterAbstract, reserved: Set<string>): Promise<void> {
  let failed = false;
  let failure: unknown;
  // Taken whole before the first step: a give-back running meanwhile (a retry) finds nothing left to give.
  const keys = [...reserved];
  reserved.clear();
  for (const key of keys) {
    try {
      const left = await counters.reward(key);
      // The window ended while the secret was checked, and the give-back opened the next one below zero.
      if (left.consumedPoints < 0) await counters.penalty(key);
    } catch (error) {
      reserved.add(key);
      if (!failed) [failed, failure] = [true, error];
    }
  }
  if (failed) throw failure;
}

/**
 * The store failed part-way through an attempt. Nobody was answered for it, so what it had
 * reserved should not count: `release` gives that back once the store is there again.
 */
export class ReservationFailedError extends Error {
  constructor(
    cause: unknown,
    readonly release: () => Promise<void>,
  ) {
    super(cause instanceof Error ? cause.message : 'the brute-force counter failed', { cause });
    this.name = 'ReservationFailedError';
  }
}

/**
 * The throttle's counters live in the platform's store: its calls get the store's deadline and
 * outage log (docs/stores.md#deadlines-and-outages). A reservation the outage kept from being
 * given back (or that landed after its deadline) is given back when the store is back, so an
 * outage does not count as failures and lock anyone out. On a pool an attempt is one store call:
 * it starts once the pool's local queue gives it a connection, so its deadline counts the store's
 * time, not the wait in line, and one shed by a full queue is load (store_busy), not an outage.
 * Its counter queries run one after another, one connection at a time. `failures` says how a
 * failed call rejects: `'unavailable'` as a 503 StoreUnavailableError (the platform's endpoints),
 * `'as-is'` with the guard's StoreTimeoutError, StoreFailedError or StoreBusyError.
 */
export function guardedThrottle(throttle: FailureThrottle, guard: StoreGuard, failures: 'unavailable' | 'as-is' = 'unavailable'): FailureThrottle {
  const call = <T>(work: () => Promise<T>): Promise<T> => (failures === 'unavailable' ? guard.run(work) : guard.ask(() => work()));
  const releaseWhenBack = (release: () => Promise<void>, tries: number): Promise<void> =>
    call(release).catch((error: unknown) => {
      if (tries > 1) guard.whenBack(() => void releaseWhenBack(release, tries - 1).catch(() => undefined));
      throw error;
    });
  return {
    attempt(names) {
      const abandoned = new AbortController();
      // Nothing reaches the store before the guard lets the call start.
      let started: Promise<ThrottledAttempt> | undefined;
      return call(() => (started = throttle.attempt(names, abandoned.signal))).then(
        (attempt) => ({ retryAfter: attempt.retryAfter, release: () => releaseWhenBack(() => attempt.release(), 5) }),
        (error: unknown) => {
          abandoned.abort(error);
          // Late, or failed part-way (a client may queue commands until it reconnects): nobody
          // was answered for this attempt, so whatever it reserved is given back.
          started
            ?.then(
              (late) => releaseWhenBack(() => late.release(), 5),
              (failed: unknown) => (failed instanceof ReservationFailedError ? releaseWhenBack(failed.release, 5) : undefined),
            )
            .catch(() => undefined);
          throw error;
        },
      );
    },
  };
}
