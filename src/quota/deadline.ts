import { QuotaStoreError, QuotaStoreTimeoutError, type QuotaDependency } from './errors.js';

/**
 * Resolves with `work`, or rejects with a QuotaStoreError / QuotaStoreTimeoutError labelled with
 * the dependency that failed, so a cut connection cannot hang a request. One promise and one
 * timer per call (no Promise.race, no async wrapper): it runs on every guarded call of a
 * networked store.
 */
export function withDeadline<T>(dependency: QuotaDependency, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new QuotaStoreTimeoutError(dependency, timeoutMs)), timeoutMs);
    timer.unref?.();
    const settle = (error: unknown) => {
      clearTimeout(timer);
      reject(asDependencyError(dependency, error));
    };
    let pending: Promise<T>;
    try {
      pending = work();
    } catch (error) {
      settle(error);
      return;
    }
    // After the deadline, a late answer or failure settles nothing: the promise is already rejected.
    pending.then((value) => {
      clearTimeout(timer);
      resolve(value);
    }, settle);
  });
}

/** A failure of the store or the rule source, labelled with the one that failed (kept when it already is). */
export function asDependencyError(dependency: QuotaDependency, error: unknown): QuotaStoreError | QuotaStoreTimeoutError {
  if (error instanceof QuotaStoreError || error instanceof QuotaStoreTimeoutError) return error;
  return new QuotaStoreError(dependency, error);
}
