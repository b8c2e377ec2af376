/**
 * What only the memory quota store can get wrong: expiry by timestamp, sweeping, keys that spell
 * the same, a clock stepping back. The behaviour it shares with the others is in stores.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createMemoryQuotaStore, createQuotaService, type QuotaBucket } from '../../src/quota/index.js';
import { buckets } from './store-helpers.js';

describe('memory quota store', () => {
  it('drops a counter once its bucket ended plus the grace, by timestamp (no timers)', async () => {
    const store = createMemoryQuotaStore({ expiryGraceMs: 100 });
    const bucket: QuotaBucket = { period: 'minute', start: 0, end: 1000, limit: 5 };
    expect(await store.consume({ clientId: 'a', apiPath: '/x', cost: 2, buckets: [bucket], now: 500 })).toEqual({ admitted: true, used: [2] });
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: [bucket], now: 999 })).toEqual([2]);
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: [bucket], now: 1099 })).toEqual([2]);
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: [bucket], now: 1100 })).toEqual([0]);
    expect(store.size).toBe(0);
    // a month-long window is just a number: nothing waits 2^31 ms
    const month: QuotaBucket = { period: 'month', start: 0, end: 31 * 86_400_000, limit: 0 };
    expect(await store.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: [month], now: 30 * 86_400_000 })).toEqual({ admitted: true, used: [1] });
  });

  it('sweeps expired counters as calls go by, so memory stays bounded', async () => {
    const store = createMemoryQuotaStore();
    let now = Date.UTC(2026, 0, 10, 12);
    const quota = createQuotaService({ store, now: () => now, logger: silentLogger });
    for (let i = 0; i < 1000; i++) await quota.consume(`client-${i}`, '/openapi/v1/orders');
    expect(store.size).toBe(3000);
    now = Date.UTC(2026, 2, 10, 12); // two months on: every one of those buckets has ended
    for (let i = 0; i < 400; i++) await quota.consume('still-active', '/openapi/v1/orders');
    // 400 calls examined 3 200 slots, the 1 000 old ones among them: every expired counter is gone, the live three remain
    expect(store.size).toBe(3);
    const again = await quota.inspect('still-active', '/openapi/v1/orders');
    expect(again.outcome === 'ok' && again.report.periods.map((p) => p.used)).toEqual([60, 60, 60]);
  });

  it('never lets one client and path share counters with another pair that spells the same', async () => {
    const store = createMemoryQuotaStore();
    const one = { clientId: 'b/c', apiPath: '/a', cost: 1, buckets: buckets(0, 1), now: 0 };
    const other = { clientId: 'c', apiPath: '/ab/', cost: 1, buckets: buckets(0, 1), now: 0 };
    expect(await store.consume(one)).toEqual({ admitted: true, used: [1] });
    expect(await store.consume(other)).toEqual({ admitted: true, used: [1] });
    expect(await store.consume(one)).toEqual({ admitted: false, used: [1] });
  });

  it('keeps the count of a past bucket when the clock steps back into it', async () => {
    const store = createMemoryQuotaStore();
    const at = (now: number) => ({ clientId: 'a', apiPath: '/x', cost: 1, buckets: buckets(now, 2), now });
    expect(await store.consume(at(59_900))).toEqual({ admitted: true, used: [1] });
    expect(await store.consume(at(60_100))).toEqual({ admitted: true, used: [1] }); // the next minute
    // NTP steps the clock back 300 ms: the first minute still holds its one call
    expect(await store.consume(at(59_800))).toEqual({ admitted: true, used: [2] });
    expect(await store.consume(at(59_850))).toEqual({ admitted: false, used: [2] });
    expect(await store.consume(at(60_200))).toEqual({ admitted: true, used: [2] });
  });

  it('sweeps everything on demand', async () => {
    const store = createMemoryQuotaStore();
    for (let i = 0; i < 10; i++) await store.consume({ clientId: `c${i}`, apiPath: '/x', cost: 1, buckets: buckets(0, 0), now: 0 });
    expect(store.size).toBe(10);
    expect(store.sweep(60_000 + 4_999)).toBe(0); // within the grace
    expect(store.sweep(60_000 + 5_000)).toBe(10);
    expect(store.size).toBe(0);
  });

  it('refuses a malformed request instead of counting it', async () => {
    const store = createMemoryQuotaStore();
    await expect(store.consume({ clientId: 'a', apiPath: '/x', cost: -1, buckets: buckets(0, 1), now: 0 })).rejects.toThrow(TypeError);
    await expect(
      store.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: [...buckets(0, 1), ...buckets(0, 1)], now: 0 }),
    ).rejects.toThrow(/twice/);
    expect(store.size).toBe(0);
  });
});
