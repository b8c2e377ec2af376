/**
 * Why a call to a shared store did not give an answer, one code per failure (docs/errors.md).
 * They never reach a client: the OAuth server and the admin API answer them as
 * `store_unavailable`, the quota guard as its `onStoreError` says; the log and `cause` keep them.
 */

/** The store answered with an error (refused, reset, a failed statement). */
export class StoreFailedError extends Error {
  readonly code: 'store_failed' = 'store_failed';
  /** Names the store, e.g. `quota store (postgres)`. */
  readonly store: string;

  constructor(store: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`the ${store} failed: ${detail}`, { cause });
    this.name = new.target.name;
    this.store = store;
  }
}

/** The store did not answer well past its deadline, or within it while it was known to be failing. */
export class StoreTimeoutError extends Error {
  readonly code: 'store_timeout' = 'store_timeout';
  readonly store: string;
  /** How long the call waited for the store, in ms (the local queue not included). */
  readonly timeoutMs: number;

  constructor(store: string, timeoutMs: number) {
    super(`the ${store} did not answer within ${timeoutMs} ms`);
    this.name = new.target.name;
    this.store = store;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The call never reached the store: every connection of its pool was busy and the local queue in
 * front of them was past its bound (docs/stores.md#the-local-queue). Load, not an outage.
 */
export class StoreBusyError extends Error {
  readonly code: 'store_busy' = 'store_busy';
  readonly store: string;

  constructor(store: string, reason: string) {
    super(`the ${store} is busy: ${reason}`);
    this.name = new.target.name;
    this.store = store;
  }
}

export type StoreCallError = StoreFailedError | StoreTimeoutError | StoreBusyError;

export function isStoreCallError(error: unknown): error is StoreCallError {
  return error instanceof StoreFailedError || error instanceof StoreTimeoutError || error instanceof StoreBusyError;
}
