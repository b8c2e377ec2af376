/**
 * The known-caller marks (known-callers.ts, docs/oauth.md#brute-force-limits) on the memory, Redis
 * and PostgreSQL stores: one conformance suite. A mark says an exact address proved a client's
 * secret; it lasts its lifetime from its last write, a client keeps its most recent marks only,
 * and marks of one client, one caller or one name never answer for another.
 */
import { describe, expect, it } from 'vitest';
import { knownCallerMarks, type KnownCallerMarks } from '../../src/oauth/known-callers.js';
import { scanKeys } from '../../src/core/redis-scan.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { memoryStores, postgresStores, redisStores, storesForEachTest, type StoreFactory } from './shared-stores.js';

const LIFETIME_MS = 60_000;
const MOST = 4;

function marksSuite(makeStores: () => StoreFactory) {
  const stores = storesForEachTest(makeStores);
  let at = Date.UTC(2031, 4, 12, 8, 30, 0);
  const clock = {
    now: () => at,
    advance: (ms: number) => {
      at += ms;
    },
  };
  const marksOn = (name = 'client-auth'): KnownCallerMarks => knownCallerMarks(stores().open(clock.now), { lifetimeMs: LIFETIME_MS, most: MOST, name, now: clock.now });

  it('a mark answers for its client and caller only', async () => {
    const marks = marksOn();
    expect(await marks.isKnown('shop', '2001:db8:3:d0:0:0:2f:6001')).toBe(false);
    await marks.remember('shop', '2001:db8:3:d0:0:0:2f:6001');
    expect(await marks.isKnown('shop', '2001:db8:3:d0:0:0:2f:6001')).toBe(true);
    expect(await marks.isKnown('shop', '2001:db8:3:d0:0:0:2f:6002')).toBe(false);
    expect(await marks.isKnown('other', '2001:db8:3:d0:0:0:2f:6001')).toBe(false);
    expect(await marksOn('login').isKnown('shop', '2001:db8:3:d0:0:0:2f:6001')).toBe(false);
  });

  it('a mark lasts its lifetime from its last write: written again, it lasts a lifetime from then', async () => {
    const marks = marksOn();
    await marks.remember('shop', '198.51.100.7');
    clock.advance(LIFETIME_MS - 1000);
    expect(await marks.isKnown('shop', '198.51.100.7')).toBe(true);
    await marks.remember('shop', '198.51.100.7');
    clock.advance(LIFETIME_MS - 1000);
    expect(await marks.isKnown('shop', '198.51.100.7')).toBe(true);
    clock.advance(1000);
    expect(await marks.isKnown('shop', '198.51.100.7')).toBe(false);
  });

  it('a client keeps its most recent marks: a new caller past them pushes out the least recently written, not one written again', async () => {
    const marks = marksOn();
    for (let i = 0; i < MOST; i++) {
      await marks.remember('shop', `198.51.100.${i}`);
      clock.advance(10);
    }
    await marks.remember('shop', '198.51.100.0');
    clock.advance(10);
    await marks.remember('shop', '198.51.100.200');
    const known = await Promise.all([0, 1, 2, 3, 200].map((i) => marks.isKnown('shop', `198.51.100.${i}`)));
    expect(known).toEqual([true, false, true, true, true]);
    // Another client's marks are its own.
    await marks.remember('other', '198.51.100.1');
    expect(await marks.isKnown('shop', '198.51.100.2')).toBe(true);
  });

  it('ended marks make room: a client whose marks all ended keeps the new ones', async () => {
    const marks = marksOn();
    for (let i = 0; i < MOST; i++) await marks.remember('shop', `198.51.100.${i}`);
    clock.advance(LIFETIME_MS);
    for (let i = 10; i < 10 + MOST; i++) await marks.remember('shop', `198.51.100.${i}`);
    const known = await Promise.all(Array.from({ length: MOST }, (_, i) => marks.isKnown('shop', `198.51.100.${10 + i}`)));
    expect(known).toEqual(Array<boolean>(MOST).fill(true));
  });

  it('client ids and callers of any characters keep apart', async () => {
    const marks = marksOn();
    await marks.remember('a:{b}', 'c');
    expect(await marks.isKnown('a', '{b}:c')).toBe(false);
    expect(await marks.isKnown('a:{b}', 'c')).toBe(true);
  });
}

describe('known-caller marks in memory', () => {
  marksSuite(memoryStores);
});

function sharedMarksSuite(makeStores: () => StoreFactory) {
  marksSuite(makeStores);
  const stores = storesForEachTest(makeStores);

  it('a mark one process writes answers for every process on the store', async () => {
    const now = () => Date.UTC(2031, 4, 12, 8, 30, 0);
    const options = { lifetimeMs: LIFETIME_MS, most: MOST, name: 'client-auth', now };
    await knownCallerMarks(stores().open(now), options).remember('shop', '2001:db8:3:d0:0:0:2f:6001');
    expect(await knownCallerMarks(stores().open(now), options).isKnown('shop', '2001:db8:3:d0:0:0:2f:6001')).toBe(true);
  });
}

describeRedis('known-caller marks on Redis', () => {
  sharedMarksSuite(redisStores);

  it('a client holds one key, which goes a lifetime after its last mark', async () => {
    const stores = redisStores();
    try {
      const now = () => Date.UTC(2031, 4, 12, 8, 30, 0);
      const marks = knownCallerMarks(stores.open(now), { lifetimeMs: LIFETIME_MS, most: MOST, name: 'client-auth', now });
      for (let i = 0; i < 10; i++) await marks.remember('shop', `198.51.100.${i}`);
      const keys = await scanKeys(stores.client(), `${stores.prefix}known-callers:*`);
      expect(keys).toHaveLength(1);
      expect(await stores.client().zcard(keys[0]!)).toBe(MOST);
      expect(await stores.client().pttl(keys[0]!)).toBeGreaterThan(LIFETIME_MS - 5000);
    } finally {
      await stores.close();
    }
  });
});

describePostgres('known-caller marks on PostgreSQL', () => {
  sharedMarksSuite(postgresStores);

  it("a client's rows stay at its most recent marks, and ended ones go with the store's sweep", async () => {
    const stores = postgresStores();
    try {
      let at = Date.UTC(2031, 4, 12, 8, 30, 0);
      const store = stores.open(() => at) as import('../../src/oauth/store/postgres.js').PostgresOAuthStore;
      const marks = knownCallerMarks(store, { lifetimeMs: LIFETIME_MS, most: MOST, name: 'client-auth', now: () => at });
      for (let i = 0; i < 10; i++) {
        await marks.remember('shop', `198.51.100.${i}`);
        at += 10;
      }
      const rows = async () => Number((await stores.pool().query(`SELECT count(*) AS n FROM "${stores.schema}".oauth_known_callers`)).rows[0].n);
      expect(await rows()).toBe(MOST);
      at += LIFETIME_MS;
      await store.deleteExpired();
      expect(await rows()).toBe(0);
    } finally {
      await stores.close();
    }
  });
});
