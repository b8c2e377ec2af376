/**
 * Failures of the quota's shared store. They never leave the quota service: it turns them into
 * the `onStoreError` outcome. They exist so logs and `store_unavailable` decisions say what broke.
 */

export type QuotaDependency = 'store' | 'rules';

/** The store (or rule source) did not answer within the service's `storeTimeoutMs`. */
export class QuotaStoreTimeoutError extends Error {
  readonly dependency: QuotaDependency;
  readonly timeoutMs: number;

  constructor(dependency: QuotaDependency, timeoutMs: number) {
    super(`the quota ${dependency === 'store' ? 'store' : 'rule source'} did not answer within ${timeoutMs} ms`);
    this.name = new.target.name;
    this.dependency = dependency;
    this.timeoutMs = timeoutMs;
  }
}

/** The store (or rule source) failed; `cause` is what it threw. */
export class QuotaStoreError extends Error {
  readonly dependency: QuotaDependency;

  constructor(dependency: QuotaDependency, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`the quota ${dependency === 'store' ? 'store' : 'rule source'} failed: ${detail}`, { cause });
    this.name = new.target.name;
    this.dependency = dependency;
  }
}
