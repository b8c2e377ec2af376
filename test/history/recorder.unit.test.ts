/**
 * The per-process batch of the usage history (src/history/recorder.ts): what a flush sends, hour
 * roll-over inside one interval, and a store that fails.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUsageRecorder, type UsageRecorder } from '../../src/history/recorder.js';
import { HOUR_MS, OTHER_PATHS, type HourCount, type UsageHistoryStore } from '../../src/history/types.js';
import { capturingLogger } from '../support/logger.js';

const RETENTION = { hourlyDays: 35, dailyDays: 400 };
const HOUR = Date.UTC(2031, 4, 12, 8);

function fakeStore() {
  const sent: HourCount[][] = [];
  let failing = false;
  const store: UsageHistoryStore & { sent: HourCount[][]; fail(on: boolean): void } = {
    kind: 'fake',
    sent,
    fail(on) {
      failing = on;
    },
    async add(counts) {
      if (failing) throw new Error('store down');
      sent.push(counts.map((count) => ({ ...count })));
    },
    async read() {},
  };
  return store;
}

const open: UsageRecorder[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((recorder) => recorder.close()));
});

function recorder(store: UsageHistoryStore, now: () => number, maxPending?: number) {
  const logger = capturingLogger();
  const made = createUsageRecorder({ store, retention: RETENTION, flushIntervalMs: 60_000, now, logger, ...(maxPending ? { maxPending } : {}) });
  open.push(made);
  return { recorder: made, logger };
}

const sorted = (rows: HourCount[]) => [...rows].sort((a, b) => a.hour - b.hour || a.apiPath.localeCompare(b.apiPath) || a.clientId.localeCompare(b.clientId));

describe('usage recorder', () => {
  it('sends one row per client, path and hour with its admitted and rejected calls', async () => {
    const store = fakeStore();
    const { recorder: r } = recorder(store, () => HOUR + 1000);
    r.record('app', '/a', true, true);
    r.record('app', '/a', true, true);
    r.record('app', '/a', false, true);
    r.record('app', '/b', true, true);
    r.record('other', '/a', false, true);
    await r.flush();
    expect(sorted(store.sent[0]!)).toEqual([
      { clientId: 'app', apiPath: '/a', hour: HOUR, admitted: 2, rejected: 1 },
      { clientId: 'other', apiPath: '/a', hour: HOUR, admitted: 0, rejected: 1 },
      { clientId: 'app', apiPath: '/b', hour: HOUR, admitted: 1, rejected: 0 },
    ]);
    // Nothing new: nothing sent; new calls: only they.
    await r.flush();
    expect(store.sent).toHaveLength(1);
    r.record('app', '/a', true, true);
    await r.flush();
    expect(store.sent[1]).toEqual([{ clientId: 'app', apiPath: '/a', hour: HOUR, admitted: 1, rejected: 0 }]);
  });

  it('keeps the hours apart when one ends between two flushes', async () => {
    const store = fakeStore();
    let now = HOUR + HOUR_MS - 1;
    const { recorder: r } = recorder(store, () => now);
    r.record('app', '/a', true, true);
    now += 1;
    r.record('app', '/a', true, true);
    r.record('app', '/a', false, true);
    await r.flush();
    expect(sorted(store.sent[0]!)).toEqual([
      { clientId: 'app', apiPath: '/a', hour: HOUR, admitted: 1, rejected: 0 },
      { clientId: 'app', apiPath: '/a', hour: HOUR + HOUR_MS, admitted: 1, rejected: 1 },
    ]);
  });

  it('keeps the counts of a failed flush for the next one, warning once per outage', async () => {
    const store = fakeStore();
    const { recorder: r, logger } = recorder(store, () => HOUR);
    store.fail(true);
    r.record('app', '/a', true, true);
    await r.flush();
    r.record('app', '/a', false, true);
    await r.flush();
    expect(logger.records.filter((record) => record.level === 'warn')).toHaveLength(1);
    store.fail(false);
    r.record('app', '/a', true, true);
    await r.flush();
    expect(store.sent).toEqual([[{ clientId: 'app', apiPath: '/a', hour: HOUR, admitted: 2, rejected: 1 }]]);
    expect(logger.records.filter((record) => record.level === 'info')).toHaveLength(1);
  });

  it('records 100 paths of unnamed guards by name per application and hour, and the calls of the rest under one row', async () => {
    const store = fakeStore();
    let now = HOUR + 1000;
    const { recorder: r } = recorder(store, () => now);
    for (let i = 0; i < 150; i += 1) r.record('app', `/orders/${i}`, true, false);
    // Named endpoints are the host's routes: never bounded. Known paths keep their own row.
    for (let i = 0; i < 150; i += 1) r.record('app', `/named/${i}`, true, true);
    r.record('app', '/orders/7', false, false);
    r.record('app', '/orders/149', false, false);
    r.record('other-app', '/orders/149', true, false);
    await r.flush();
    const rows = store.sent[0]!;
    const mine = rows.filter((row) => row.clientId === 'app');
    expect(mine.filter((row) => row.apiPath.startsWith('/orders/'))).toHaveLength(100);
    expect(mine.filter((row) => row.apiPath.startsWith('/named/'))).toHaveLength(150);
    expect(mine.find((row) => row.apiPath === '/orders/7')).toMatchObject({ admitted: 1, rejected: 1 });
    expect(mine.find((row) => row.apiPath === OTHER_PATHS)).toEqual({ clientId: 'app', apiPath: OTHER_PATHS, hour: HOUR, admitted: 50, rejected: 1 });
    expect(rows.find((row) => row.clientId === 'other-app')).toMatchObject({ apiPath: '/orders/149', admitted: 1 });
    // Every call is in some row.
    expect(rows.reduce((sum, row) => sum + row.admitted + row.rejected, 0)).toBe(303);

    // A new hour: 100 paths by name again.
    now = HOUR + HOUR_MS + 1000;
    for (let i = 100; i < 250; i += 1) r.record('app', `/orders/${i}`, true, false);
    await r.flush();
    const next = store.sent[1]!.filter((row) => row.hour === HOUR + HOUR_MS);
    expect(next.filter((row) => row.apiPath.startsWith('/orders/')).map((row) => row.apiPath)).toEqual(Array.from({ length: 100 }, (_, i) => `/orders/${i + 100}`));
    expect(next.find((row) => row.apiPath === OTHER_PATHS)?.admitted).toBe(50);
  });

  it('keeps at most maxPending rows while the store fails, and says how many calls it left out', async () => {
    const store = fakeStore();
    const { recorder: r, logger } = recorder(store, () => HOUR, 2);
    store.fail(true);
    for (const path of ['/a', '/b', '/c']) r.record('app', path, true, true);
    await r.flush();
    store.fail(false);
    await r.flush();
    expect(store.sent[0]).toHaveLength(2);
    expect(logger.text()).toContain('"calls":1');
  });

  it('sends what is left at close, and a close never rejects', async () => {
    const store = fakeStore();
    const { recorder: r } = recorder(store, () => HOUR);
    r.record('app', '/a', true, true);
    await r.close();
    expect(store.sent).toEqual([[{ clientId: 'app', apiPath: '/a', hour: HOUR, admitted: 1, rejected: 0 }]]);
    store.fail(true);
    r.record('app', '/a', true, true);
    await expect(r.close()).resolves.toBeUndefined();
  });

  it('flushes by itself within its interval', async () => {
    const store = fakeStore();
    const made = createUsageRecorder({ store, retention: RETENTION, flushIntervalMs: 20, now: () => HOUR, logger: capturingLogger() });
    open.push(made);
    made.record('app', '/a', true, true);
    await expect.poll(() => store.sent.length, { timeout: 2000 }).toBe(1);
  });
});
