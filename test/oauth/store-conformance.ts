/**
 * The one behaviour every OAuthStore must show (src/oauth/store/types.ts), run against memory,
 * Redis and PostgreSQL alike (stores.test.ts) so the three cannot drift; what only one backend can
 * get wrong is in memory-store, redis-store and postgres-store.test.ts. The tests themselves live
 * per concern in store-conformance/.
 *
 * One store per backend serves the whole suite; each test works on fresh ids, and the injected
 * clock is reset before each test and moved by hand to cross expiry deadlines.
 */
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import type { OAuthStore } from '../../src/oauth/store/types.js';
import { describeClientConformance } from './store-conformance/clients.js';
import { describeCodeAndTokenConformance } from './store-conformance/codes-and-tokens.js';
import { BASE_TIME, type ConformanceSuite } from './store-conformance/fixtures.js';
import { describeOneTimeIdConformance } from './store-conformance/one-time-ids.js';
import { describeRecordConformance } from './store-conformance/records.js';
import { describeRefreshConformance } from './store-conformance/refresh.js';
import { describeRevocationAndConsentConformance } from './store-conformance/revocation-and-consents.js';

export { accessView, BASE_TIME, codeRecord, HOUR, issueGrant, MINUTE, nextTokens } from './store-conformance/fixtures.js';

export interface OAuthStoreConformanceOptions {
  name: string;
  /**
   * Builds a store on the given clock; cleanup removes everything it stored and closes clients.
   * `footprint` answers how much the store holds for one grant (Redis: keys and hash fields under
   * its tag; PostgreSQL: the stored size of its rows; memory: entries); without it the bound check
   * still refreshes the grant but cannot count.
   */
  create: (now: Clock) => Promise<{ store: OAuthStore; footprint?(grantId: string): Promise<number>; cleanup(): Promise<void> }>;
}

export function describeOAuthStoreConformance({ name, create }: OAuthStoreConformanceOptions): void {
  describe(`OAuthStore conformance: ${name}`, () => {
    const clock = { now: BASE_TIME };
    let built: Awaited<ReturnType<OAuthStoreConformanceOptions['create']>> | undefined;
    const suite: ConformanceSuite = {
      clock,
      get store() {
        if (!built) throw new Error('the conformance store is built in beforeAll');
        return built.store;
      },
      get footprint() {
        return built?.footprint;
      },
    };

    beforeAll(async () => {
      built = await create(() => clock.now);
    });
    afterAll(async () => {
      await built?.cleanup();
    });
    beforeEach(() => {
      clock.now = BASE_TIME;
    });

    describeClientConformance(suite);
    describeCodeAndTokenConformance(suite);
    describeRefreshConformance(suite);
    describeRevocationAndConsentConformance(suite);
    describeOneTimeIdConformance(suite);
    describeRecordConformance(suite);
  });
}
