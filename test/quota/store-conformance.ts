/**
 * The one behaviour every quota store must show (docs/stores.md, docs/quota.md), driven through the quota
 * service with an injected clock, so rules, periods and get_quota are checked on each store too.
 * stores.test.ts runs it against memory, Redis and PostgreSQL; the tests themselves live per
 * concern in store-conformance/.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe } from 'vitest';
import type { QuotaStore } from '../../src/quota/index.js';
import { registerAdmissionTests } from './store-conformance/admission.js';
import { createHarness, type QuotaConformanceSuite } from './store-conformance/harness.js';
import { registerPeriodTests } from './store-conformance/periods.js';
import { registerUsageAndStoredRuleTests } from './store-conformance/usage-and-stored-rules.js';

export interface ConformanceTarget {
  store: QuotaStore;
  /** Drops what the test created (keys, schema) and closes clients. */
  teardown(): Promise<void>;
}

export interface ConformanceOptions {
  name: string;
  create: () => Promise<ConformanceTarget> | ConformanceTarget;
  /** `describe`, or `describeRedis` / `describePostgres` to skip visibly without a server. */
  suite?: (name: string, body: () => void) => void;
}

export function describeQuotaStoreConformance({ name, create, suite = describe }: ConformanceOptions): void {
  suite(`quota store conformance: ${name}`, () => {
    // A fresh store per test: each test runs its own clock, and on a shared store the background
    // sweep of one test (at, say, 2028) would delete the counters of the next (back in 2026).
    let target: ConformanceTarget | undefined;
    beforeEach(async () => {
      target = await create();
    });
    afterEach(async () => {
      await target?.teardown();
    });

    const tests: QuotaConformanceSuite = {
      get store() {
        if (!target) throw new Error('the conformance store is built in beforeEach');
        return target.store;
      },
      harness: (options) => createHarness(tests.store, options),
      client: (label) => `${label}-${randomBytes(4).toString('hex')}`,
    };
    registerAdmissionTests(tests);
    registerPeriodTests(tests);
    registerUsageAndStoredRuleTests(tests);
  });
}
