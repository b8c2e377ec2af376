/**
 * The quota's errors. QuotaStoreError and QuotaStoreTimeoutError never leave the quota service:
 * it turns them into the `onStoreError` outcome; they exist so logs and `store_unavailable`
 * decisions say what broke. QuotaExceededError and QuotaStoreUnavailableError are the answers the
 * guard and get_quota render as the envelope.
 */
import { PlatformError } from '../core/errors.js';

export type QuotaDependency = 'store' | 'rules';

function dependencyName(dependency: QuotaDependency): string {
  return dependency === 'store' ? 'store' : 'rule source';
}

/** The store (or rule source) did not answer within the service's `storeTimeoutMs`. */
export class QuotaStoreTimeoutError extends Error {
  readonly code = 'quota_store_timeout';
  readonly dependency: QuotaDependency;
  readonly timeoutMs: number;

  constructor(dependency: QuotaDependency, timeoutMs: number) {
    super(`the quota ${dependencyName(dependency)} did not answer within ${timeoutMs} ms`);
    this.name = new.target.name;
    this.dependency = dependency;
    this.timeoutMs = timeoutMs;
  }
}

/** The store (or rule source) failed; `cause` is what it threw. */
export class QuotaStoreError extends Error {
  readonly code = 'quota_store_failed';
  readonly dependency: QuotaDependency;

  constructor(dependency: QuotaDependency, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`the quota ${dependencyName(dependency)} failed: ${detail}`, { cause });
    this.name = new.target.name;
    this.dependency = dependency;
  }
}

/** 429: a period of the endpoint's quota is used up; `data` names it and when it resets. */
export class QuotaExceededError extends PlatformError {
  constructor(message: string, data: unknown, headers: Record<string, string>) {
    super(429, 'quota_exceeded', message, { data, headers });
  }
}

/** 503: the store failed and `onStoreError` is `'closed'`, or get_quota could not read it. */
export class QuotaStoreUnavailableError extends PlatformError {
  constructor(cause?: unknown) {
    super(503, 'quota_store_unavailable', 'The quota service is unavailable; try again in a few seconds', { headers: { 'retry-after': '1' }, cause });
  }
}
