/**
 * Wrong admin tokens (docs/operator.md#wrong-tokens): limited per client address and logged
 * without the token. They are counted as the OAuth brute-force limits count (reserved by attempt
 * before the token is compared, a right token giving back its own), on windows kept in this
 * process: with N processes behind a balancer a guesser gets at most N × the limit per window,
 * which against a token of 32+ characters changes nothing; the limit is there to make guessing
 * loud and slow, not to be the only defence.
 */
import type { Logger } from '../core/logger.js';
import { memoryWindows } from '../oauth/failure-windows.js';
import { countFailures } from '../oauth/throttle.js';

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
   * no more comparisons than the limit.
   */
  reserve(address: string): Promise<TokenAttempt>;
}

export interface TokenAttempt {
  /** 0 when the token may be compared; otherwise the seconds to wait (answer 429 with Retry-After). */
  readonly retryAfter: number;
  /** The token was right: its reservation is given back. */
  admitted(): Promise<void>;
  /** The token was wrong: its reservation stays, and the log hears of it. */
  failed(): void;
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
  const throttle = countFailures({ address: ADMIN_TOKEN_FAILURES }, memoryWindows(ADMIN_TOKEN_WINDOW_SECONDS * 1000));
  const log = failedTokenLog(logger);
  return {
    async reserve(address) {
      const attempt = await throttle.attempt([{ kind: 'address', id: address }]);
      if (attempt.retryAfter > 0) log(address, 'refused');
      return {
        retryAfter: attempt.retryAfter,
        // Memory windows answer at once and never fail, so the give-back cannot hold up or fail the admitted request.
        admitted: () => attempt.release(),
        failed: () => log(address, 'failures'),
      };
    },
  };
}
