/**
 * The quota's errors. QuotaStoreError and QuotaStoreTimeoutError (codes `store_failed` and
 * `store_timeout`, as for every store) never leave the quota service: it turns them into the
 * `onStoreError` outcome; they exist so logs and `store_unavailable` decisions say what broke.
 * QuotaExceededError and QuotaStoreUnavailableError are the answers the guard and get_quota
 * render as the envelope.
 */
import { PlatformError } from '../core/errors.js';
import { StoreBusyError, StoreFailedError, StoreTimeoutError } from '../core/store-errors.js';

export type QuotaDependency = 'store' | 'rules';

function dependencyName(dependency: QuotaDependency): string {
  return dependency === 'store' ? 'quota store' : 'quota rule source';
}

/** The store (or rule source) did not answer well past the service's `storeTimeoutMs` (docs/quota.md#when-the-store-is-slow-or-down). */
export class QuotaStoreTimeoutError extends StoreTimeoutError {
  readonly dependency: QuotaDependency;

  constructor(dependency: QuotaDependency, timeoutMs: number) {
    super(dependencyName(dependency), timeoutMs);
    this.dependency = dependency;
  }
}

/** The store (or rule source) failed; `cause` is what it threw. */
export class QuotaStoreError extends StoreFailedError {
  readonly dependency: QuotaDependency;

  constructor(dependency: QuotaDependency, cause: unknown) {
    super(dependencyName(dependency), cause);
    this.dependency = dependency;
  }
}

/** Why the quota could not ask the store: it failed, it timed out, or the local queue shed the call. */
export type QuotaFailure = QuotaStoreError | QuotaStoreTimeoutError | StoreBusyError;

/** A store call that timed out or failed, labelled with the quota's dependency (kept when it already is). */
export function asDependencyError(dependency: QuotaDependency, error: unknown): QuotaFailure {
  if (error instanceof QuotaStoreError || error instanceof QuotaStoreTimeoutError || error instanceof StoreBusyError) return error;
  if (error instanceof StoreTimeoutError) return new QuotaStoreTimeoutError(dependency, error.timeoutMs);
  return new QuotaStoreError(dependency, error instanceof StoreFailedError ? error.cause : error);
}

/** 429: a period of the endpoint's quota is used up; `data` names it and when it resets. */
export class QuotaExceededError extends PlatformError {
  constructor(message: string, data: unknown, headers: Record<string, string>) {
    super('quota_exceeded', message, { data, headers });
  }
}

/** 503: the store failed and `onStoreError` is `'closed'`, the local queue in front of it is full, or get_quota could not read it. */
export class QuotaStoreUnavailableError extends PlatformError {
  constructor(cause?: unknown) {
    super('quota_store_unavailable', 'The quota service is unavailable; try again in a few seconds', { headers: { 'retry-after': '1' }, cause });
  }
}
