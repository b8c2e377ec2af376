import { RateLimiterMemory } from 'rate-limiter-flexible';

/**
 * Brute-force protection built on rate-limiter-flexible: failures are counted per key (a client
 * id, a user name, an IP), and a key that used up its failures is refused before any secret is
 * checked. Keys are counted whether the client or user exists or not, so a refusal reveals nothing.
 */
export interface FailureThrottle {
  /** Seconds until every given key may try again; 0 when none is blocked. */
  blockedFor(keys: readonly string[]): Promise<number>;
  recordFailure(keys: readonly string[]): Promise<void>;
  /** Forgets the failures of a key after a success (the per-IP count is left alone on purpose). */
  forget(key: string): Promise<void>;
}

export interface FailureThrottleOptions {
  /** Failures allowed per key within the window. */
  failures: number;
  windowSeconds: number;
}

export function createFailureThrottle({ failures, windowSeconds }: FailureThrottleOptions): FailureThrottle {
  const limiter = new RateLimiterMemory({ points: failures, duration: windowSeconds });
  return {
    async blockedFor(keys) {
      const states = await Promise.all(keys.map((key) => limiter.get(key)));
      let wait = 0;
      for (const state of states) {
        if (state && state.consumedPoints >= failures) wait = Math.max(wait, Math.ceil(state.msBeforeNext / 1000), 1);
      }
      return wait;
    },
    async recordFailure(keys) {
      await Promise.all(keys.map((key) => limiter.penalty(key, 1)));
    },
    async forget(key) {
      await limiter.delete(key);
    },
  };
}

export interface LoginThrottle {
  /** Seconds the user name or IP must wait before another attempt; 0 when allowed. */
  check(username: string, ip: string): Promise<number>;
  failed(username: string, ip: string): Promise<void>;
  succeeded(username: string): Promise<void>;
}

/**
 * For the host's login page: limits failed logins per user name and per IP.
 *
 * @example
 * const logins = createLoginThrottle();
 * const wait = await logins.check(username, req.ip);
 * if (wait > 0) return res.status(429).set('Retry-After', String(wait)).send('Too many attempts');
 * if (!valid) await logins.failed(username, req.ip); else await logins.succeeded(username);
 */
export function createLoginThrottle(options: Partial<FailureThrottleOptions> = {}): LoginThrottle {
  const throttle = createFailureThrottle({ failures: options.failures ?? 5, windowSeconds: options.windowSeconds ?? 900 });
  const keys = (username: string, ip: string) => [`user:${username.toLowerCase()}`, `ip:${ip}`];
  return {
    check: (username, ip) => throttle.blockedFor(keys(username, ip)),
    failed: (username, ip) => throttle.recordFailure(keys(username, ip)),
    succeeded: (username) => throttle.forget(`user:${username.toLowerCase()}`),
  };
}
