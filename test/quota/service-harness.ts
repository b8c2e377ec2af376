/**
 * The quota service as its unit tests drive it: an injected clock, a recording logger, and a
 * memory store that can be made to fail the ways a networked one does.
 */
import type { LogFields, Logger } from '../../src/core/logger.js';
import { createMemoryQuotaStore, createQuotaService, type QuotaServiceOptions, type QuotaStore } from '../../src/quota/index.js';

export const at = (s: string): number => Date.parse(s);

interface Recorded {
  level: keyof Logger;
  message: string;
  fields?: LogFields;
}
export function recordingLogger(): Logger & { records: Recorded[] } {
  const records: Recorded[] = [];
  const log = (level: keyof Logger) => (fields: LogFields, message: string) => records.push({ level, message, fields });
  return { records, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

export type Failure = false | 'reject' | 'throw' | 'hang';
type FlakyStore = QuotaStore & { failure: Failure; consumed: number };
/** A memory store that can be made to fail in each of the ways a real one does. */
export function flakyStore(): FlakyStore {
  const inner = createMemoryQuotaStore();
  const fail = <T>(run: () => Promise<T>, self: { failure: Failure }): Promise<T> => {
    if (self.failure === 'throw') throw new Error('ECONNRESET (thrown synchronously)');
    if (self.failure === 'reject') return Promise.reject(new Error('ECONNREFUSED'));
    if (self.failure === 'hang') return new Promise<T>(() => {});
    return run();
  };
  const store: FlakyStore = {
    kind: 'flaky',
    failure: false,
    consumed: 0,
    consume(request) {
      return fail(() => {
        store.consumed++;
        return inner.consume(request);
      }, store);
    },
    peek(request) {
      return fail(() => inner.peek(request), store);
    },
  };
  return store;
}

export function service(options: QuotaServiceOptions & { start?: string } = {}) {
  let now = at(options.start ?? '2026-11-21T10:00:37Z');
  const logger = recordingLogger();
  const { start: _start, ...rest } = options;
  const quota = createQuotaService({ logger, now: () => now, ...rest });
  return {
    quota,
    logger,
    advance(ms: number) {
      now += ms;
    },
  };
}
