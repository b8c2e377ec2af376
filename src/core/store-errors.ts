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

/**
 * The store answered, with an error about the data of one record rather than about itself: a
 * Redis key of another type than the command's, or a count it cannot add to (WRONGTYPE, "not an
 * integer or out of range", "would overflow"); a PostgreSQL data exception (SQLSTATE class 22,
 * as 22003 numeric_value_out_of_range); a stored text that is not the JSON the store keeps
 * there (a SyntaxError of JSON.parse). Damaged data, not an outage: the store guard lets it
 * start, extend or end no outage and counts it as no failure (docs/stores.md#deadlines-and-outages).
 */
export class StoreDataError extends StoreFailedError {
  constructor(store: string, cause: unknown) {
    super(store, cause);
    const detail = cause instanceof Error ? cause.message : String(cause);
    this.message = `the ${store} cannot use a record it holds: ${detail}`;
  }
}

/** Redis's answers about a key's value (in a script too, where Redis adds where it failed). */
const REDIS_DATA_ERROR = /\bWRONGTYPE\b|value is not an integer or out of range|increment or decrement would overflow|value is not a valid float/;

/**
 * True for an error a store answered about one record's data (StoreDataError): an ioredis
 * ReplyError above, a pg error whose SQLSTATE is of class 22, or a record's JSON that does not
 * parse. Read on failure only.
 */
export function isRecordDataError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof SyntaxError) return true;
  if (error.name === 'ReplyError') return REDIS_DATA_ERROR.test(error.message);
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
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
