/**
 * What the quota store conformance concerns drive: the quota service on the store under test with
 * a clock the test sets, fresh client ids, and the checks on a decision.
 */
import { expect } from 'vitest';
import { silentLogger } from '../../../src/core/logger.js';
import { createQuotaService, type QuotaDecision, type QuotaRejected, type QuotaRule, type QuotaService, type QuotaStore } from '../../../src/quota/index.js';

/**
 * One test's view of the suite: the store is built fresh for each test (the entry's beforeEach),
 * so it is read when a test runs, never when the tests are registered.
 */
export interface QuotaConformanceSuite {
  readonly store: QuotaStore;
  harness(options: HarnessOptions): Harness;
  /** A fresh client id per test too, so no two tests ever read the same counter. */
  client(label: string): string;
}

export interface HarnessOptions {
  rules?: QuotaRule[];
  timeZone?: string;
  start: string;
}

export const at = (iso: string): number => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`bad instant ${iso}`);
  return t;
};
export const iso = (ms: number): string => new Date(ms).toISOString();

export function expectAdmitted(decision: QuotaDecision): asserts decision is Extract<QuotaDecision, { outcome: 'admitted' }> {
  expect(decision.outcome, JSON.stringify(decision)).toBe('admitted');
}
export function expectRejected(decision: QuotaDecision): asserts decision is QuotaRejected {
  expect(decision.outcome, JSON.stringify(decision)).toBe('rejected');
}

export interface Harness {
  quota: QuotaService;
  set(instant: string | number): void;
  used(clientId: string, path: string): Promise<Record<string, number>>;
}

/** The quota service on the store under test, on a clock the test sets. */
export function createHarness(store: QuotaStore, options: HarnessOptions): Harness {
  let now = at(options.start);
  const quota = createQuotaService({
    store,
    rules: options.rules ?? [],
    timeZone: options.timeZone ?? 'UTC',
    now: () => now,
    logger: silentLogger,
    onStoreError: 'closed', // a store failure must show up as a failure here, never as an admission
    storeTimeoutMs: 5000,
  });
  return {
    quota,
    set(instant) {
      now = typeof instant === 'number' ? instant : at(instant);
    },
    async used(clientId, path) {
      const inspection = await quota.inspect(clientId, path);
      if (inspection.outcome !== 'ok') throw inspection.error;
      return Object.fromEntries(inspection.report.periods.map((p) => [p.period, p.used]));
    },
  };
}
