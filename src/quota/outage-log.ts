import type { Logger } from '../core/logger.js';
import type { QuotaStoreError, QuotaStoreTimeoutError } from './errors.js';
import type { OnStoreError } from './options.js';

/**
 * Tells the log about store outages: one warning when the store (or rule source) starts failing,
 * one info when it answers again, nothing in between however many calls fail.
 */
export interface OutageLog {
  failed(error: QuotaStoreError | QuotaStoreTimeoutError, now: number): void;
  worked(now: number): void;
  /** True while the last store call failed. */
  readonly degraded: boolean;
}

export function createOutageLog(logger: Logger, storeKind: string, onStoreError: OnStoreError): OutageLog {
  let since: number | undefined;
  return {
    failed(error, now) {
      if (since !== undefined) return;
      since = now;
      logger.warn(
        { store: storeKind, dependency: error.dependency, err: error },
        onStoreError === 'open'
          ? 'quota store unavailable: admitting calls under the local insurance limit until it is back (onStoreError: open)'
          : 'quota store unavailable: answering 503 until it is back (onStoreError: closed)',
      );
    },
    worked(now) {
      if (since === undefined) return;
      logger.info({ store: storeKind, unavailableForMs: Math.max(0, now - since) }, 'quota store available again');
      since = undefined;
    },
    get degraded() {
      return since !== undefined;
    },
  };
}
