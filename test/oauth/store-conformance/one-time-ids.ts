/**
 * OAuthStore conformance. One-time ids: the first use wins, once among concurrent callers, until
 * the id expires.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStore } from '../../../src/oauth/store/types.js';
import { BASE_TIME, type ConformanceSuite, fresh, MINUTE } from './fixtures.js';

export function describeOneTimeIdConformance(suite: ConformanceSuite): void {
  const { clock } = suite;
  let store: OAuthStore;
  beforeAll(() => {
    ({ store } = suite);
  });

  describe('one-time ids', () => {
    it('answers true for the first use of an id and false for every later one until it expires', async () => {
      const id = fresh('once');
      expect(await store.useOnce(id, BASE_TIME + 10 * MINUTE)).toBe(true);
      expect(await store.useOnce(id, BASE_TIME + 10 * MINUTE)).toBe(false);
      clock.now = BASE_TIME + 9 * MINUTE;
      expect(await store.useOnce(id, BASE_TIME + 10 * MINUTE)).toBe(false);
      expect(await store.useOnce(fresh('once'), BASE_TIME + 10 * MINUTE)).toBe(true);
    });

    it('forgets an id once its expiry passed', async () => {
      const id = fresh('once');
      expect(await store.useOnce(id, BASE_TIME + MINUTE)).toBe(true);
      clock.now = BASE_TIME + MINUTE + 1000;
      expect(await store.useOnce(id, clock.now + MINUTE)).toBe(true);
      expect(await store.useOnce(id, clock.now + MINUTE)).toBe(false);
    });

    it('lets exactly one of 20 concurrent callers use an id', async () => {
      const id = fresh('once');
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.useOnce(id, BASE_TIME + MINUTE)));
      expect(outcomes.filter(Boolean)).toHaveLength(1);
    });
  });
}
