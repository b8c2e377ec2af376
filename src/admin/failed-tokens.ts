/**
 * Wrong admin tokens (docs/operator.md#wrong-tokens): limited per client address and logged
 * without the token. The counters live in this process (rate-limiter-flexible's memory limiter):
 * with N processes behind a balancer a guesser gets at most N × the limit per window, which
 * against a token of 32+ characters changes nothing; the limit is there to make guessing loud
 * and slow, not to be the only defence.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../core/logger.js';

/** Wrong tokens an address may send within the window before its token attempts get 429. */
export const ADMIN_TOKEN_FAILURES = 10;
export const ADMIN_TOKEN_WINDOW_SECONDS = 900;
/** At most one log line per address in this interval; the line counts what happened since the last. */
export const FAILED_TOKEN_LOG_INTERVAL_MS = 60_000;
/** Addresses tracked for the log at once; past this, new ones share one line as `other addresses`. */
export const MAX_LOGGED_ADDRESSES = 10_000;

export interface FailedTokenLimit {
  /**
   * Reserves a failure for the address before the token is compared, so a burst of guesses runs
   * no more comparisons than the limit. 0 when the token may be compared; otherwise the seconds
   * to wait (answer 429 with Retry-After).
   */
  reserve(address: string): Promise<number>;
  /** The token was right: its reservation is given back. */
  admitted(address: string): void;
  /** The token was wrong: its reservation stays, and the log hears of it. */
  failed(address: string): void;
}

type Outcome = 'failures' | 'refused';
type Counts = Record<Outcome, number>;

/**
 * One warning per address per interval: the first event of an address is written at once, what
 * follows within the interval is counted and written when the interval ends.
 */
export function failedTokenLog(
  logger: Logger,
  { intervalMs = FAILED_TOKEN_LOG_INTERVAL_MS, maxAddresses = MAX_LOGGED_ADDRESSES } = {},
): (address: string, outcome: Outcome) => void {
  const quiet = new Map<string, Counts>();
  const write = (address: string, counts: Counts) =>
    logger.warn({ address, ...counts, intervalSeconds: intervalMs / 1000 }, 'admin: wrong admin tokens from this address (the token is never logged)');
  const hush = (address: string) => {
    const counts: Counts = { failures: 0, refused: 0 };
    quiet.set(address, counts);
    const timer = setTimeout(() => {
      quiet.delete(address);
      if (counts.failures + counts.refused === 0) return;
      write(address, counts);
      hush(address);
    }, intervalMs);
    timer.unref();
  };
  return (address, outcome) => {
    const key = quiet.has(address) || quiet.size < maxAddresses ? address : 'other addresses';
    const counts = quiet.get(key);
    if (counts) {
      counts[outcome] += 1;
      return;
    }
    write(key, { failures: outcome === 'failures' ? 1 : 0, refused: outcome === 'refused' ? 1 : 0 });
    hush(key);
  };
}

export function failedTokenLimit(logger: Logger): FailedTokenLimit {
  const limiter = new RateLimiterMemory({ points: ADMIN_TOKEN_FAILURES, duration: ADMIN_TOKEN_WINDOW_SECONDS, keyPrefix: 'admin-token' });
  const log = failedTokenLog(logger);
  return {
    async reserve(address) {
      try {
        await limiter.consume(address);
        return 0;
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        log(address, 'refused');
        return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      }
    },
    admitted(address) {
      // The memory limiter answers at once and never fails.
      void limiter.reward(address, 1);
    },
    failed(address) {
      log(address, 'failures');
    },
  };
}
