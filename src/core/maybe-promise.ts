/**
 * A value now, or later. The quota guard's hot path stays synchronous when every part it calls is
 * in process (memory stores, a static rule list): no promise, no microtask, `next()` in the same
 * tick. Anything that may go over a network keeps returning a promise.
 */
export type MaybePromise<T> = T | Promise<T>;

export function isThenable<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
