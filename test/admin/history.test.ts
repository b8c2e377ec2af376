/**
 * `{admin}/usage/history` (docs/operator.md#usage-history): admitted and rejected guarded calls
 * per endpoint by UTC hour and day, on the memory store (every adapter) and on Redis and
 * PostgreSQL stores shared by two platforms, with an injected clock.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { PlatformRequest } from '../../src/core/http.js';
import type { HistoryRetention } from '../../src/history/types.js';
import { createPlatform } from '../../src/platform.js';
import { createMemoryQuotaStore, createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { accessToken, ADAPTER_NAMES, closeHosts, CONFIDENTIAL, OTHER, PING, ORDERS, ping, postOrder, startHost, testClock, type QuotaHost, type TestClock } from '../http/quota-helpers.js';
import { readPoints } from '../history/fixtures.js';
import { capturingLogger } from '../support/logger.js';
import { databaseUrl, describePostgres, describeRedis, dropPrefix, redisUrl, uniqueName } from '../support/services.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 2031-05-12T08:30:15Z, the clock's start. */
const START = Date.UTC(2031, 4, 12, 8, 30, 15);
const FLUSH_MS = 100;

afterEach(closeHosts);

interface Setup {
  store?: QuotaStore;
  clock?: TestClock;
  retention?: Partial<HistoryRetention>;
}

const host = (adapter: (typeof ADAPTER_NAMES)[number], setup: Setup = {}): Promise<QuotaHost> =>
  startHost(adapter, {
    quota: {
      ...(setup.store ? { store: setup.store } : {}),
      rules: [{ scope: 'global', apiPath: PING, minute: 4 }],
      history: { flushIntervalMs: FLUSH_MS, ...setup.retention },
    },
    clock: setup.clock ?? testClock(START),
    accessTokenSeconds: 7 * 24 * 3600,
    platform: { admin: { token: TOKEN } },
  });

const history = (h: QuotaHost, query: Record<string, string>) => h.http().get(`/admin/usage/history?${new URLSearchParams(query)}`).set(OPERATOR);

interface Point {
  at: string;
  admitted: number;
  rejected: number;
}
interface Series {
  api_path: string;
  points: Point[];
}
/** The points with calls, per endpoint. */
const busy = (series: Series[]) => Object.fromEntries(series.map((s) => [s.api_path, s.points.filter((p) => p.admitted + p.rejected > 0)]));
const iso = (ms: number) => new Date(ms).toISOString();

/** Waits (within the 10 s docs/operator.md#usage-history promises) until the history answers `expected` for the query. */
async function shows(h: QuotaHost, query: Record<string, string>, expected: Record<string, Point[]>) {
  await vi.waitFor(
    async () => {
      const res = await history(h, query);
      expect(res.status, res.text).toBe(200);
      expect(busy(res.body.data.series)).toEqual(expected);
    },
    { timeout: 10_000, interval: 50 },
  );
}

describe.each(ADAPTER_NAMES)('usage history on %s', (adapter) => {
  it('answers the last 24 hours by hour, zero-filled, with 429s as rejected', async () => {
    const h = await host(adapter);
    const { token } = await accessToken(h, CONFIDENTIAL);
    for (let i = 0; i < 5; i += 1) await ping(h, token);
    expect((await postOrder(h, token)).status).toBe(200);
    const hour = iso(START - (START % HOUR));
    await shows(h, { client_id: CONFIDENTIAL.id }, {
      [ORDERS]: [{ at: hour, admitted: 1, rejected: 0 }],
      [PING]: [{ at: hour, admitted: 4, rejected: 1 }],
    });
    const res = await history(h, { client_id: CONFIDENTIAL.id });
    expect(res.body.data).toMatchObject({ client_id: CONFIDENTIAL.id, step: 'hour' });
    const points = res.body.data.series[0].points as Point[];
    // Every hour overlapping the last 24 hours: 08:00 yesterday to 08:00 today.
    expect(points).toHaveLength(25);
    expect(points[0]).toEqual({ at: iso(START - (START % HOUR) - DAY), admitted: 0, rejected: 0 });

    const one = await history(h, { client_id: CONFIDENTIAL.id, api_path: ORDERS, step: 'day' });
    expect(one.body.data.series.map((s: Series) => s.api_path)).toEqual([ORDERS]);
    expect(busy(one.body.data.series)).toEqual({ [ORDERS]: [{ at: iso(START - (START % DAY)), admitted: 1, rejected: 0 }] });
    // An application without calls: no series, or one of zeros for the endpoint asked for.
    expect((await history(h, { client_id: OTHER.id })).body.data.series).toEqual([]);
    expect(busy((await history(h, { client_id: OTHER.id, api_path: PING })).body.data.series)).toEqual({ [PING]: [] });
  });

  it('shows the 100 endpoints with the most calls and sums the rest into `other`', async () => {
    const store = createMemoryQuotaStore();
    const h = await host(adapter, { store });
    const hour = START - (START % HOUR);
    // Endpoint i had i calls in this hour, one of them refused: 130 endpoints, 8,515 calls.
    const counts = Array.from({ length: 130 }, (_, i) => ({ clientId: CONFIDENTIAL.id, apiPath: `/openapi/v1/orders/${i + 1}`, hour, admitted: i, rejected: 1 }));
    await store.history!.add(counts, START, { hourlyDays: 35, dailyDays: 400 });

    const res = await history(h, { client_id: CONFIDENTIAL.id });
    expect(res.status, res.text).toBe(200);
    const { series, other } = res.body.data as { series: Series[]; other: { endpoints: number; points: Point[] } };
    expect(series.map((s) => s.api_path)).toEqual(Array.from({ length: 100 }, (_, i) => `/openapi/v1/orders/${i + 31}`).sort());
    expect(other.endpoints).toBe(30);
    expect(other.points).toHaveLength(25);
    expect(other.points.filter((p) => p.admitted + p.rejected > 0)).toEqual([{ at: iso(hour), admitted: 435, rejected: 30 }]);
    const total = [...series, other].flatMap((s) => s.points).reduce((sum, p) => sum + p.admitted + p.rejected, 0);
    expect(total).toBe(130 + (129 * 130) / 2);

    // One endpoint asked for: its series alone, whatever its rank.
    const one = await history(h, { client_id: CONFIDENTIAL.id, api_path: '/openapi/v1/orders/1' });
    expect(busy(one.body.data.series)).toEqual({ '/openapi/v1/orders/1': [{ at: iso(hour), admitted: 0, rejected: 1 }] });
    expect(one.body.data.other).toBeNull();
  });

  it('refuses a bad query with a 400 naming the field, an unknown client with 404, and wants the operator', async () => {
    const h = await host(adapter);
    const field = async (query: Record<string, string>) => {
      const res = await history(h, query);
      expect(res.status, res.text).toBe(400);
      return res.body.data.errors[0].field as string;
    };
    expect(await field({})).toBe('client_id');
    expect(await field({ client_id: 'app\u0000x' })).toBe('client_id');
    expect(await field({ client_id: CONFIDENTIAL.id, step: 'minute' })).toBe('step');
    expect(await field({ client_id: CONFIDENTIAL.id, from: 'yesterday' })).toBe('from');
    expect(await field({ client_id: CONFIDENTIAL.id, from: '2031-05-12T10:00:00Z', to: '2031-05-12T09:00:00Z' })).toBe('from');
    // 1000 points at most: 42 days by the hour is too many, by the day it is not.
    const range = { client_id: CONFIDENTIAL.id, from: '2031-03-01T00:00:00Z', to: '2031-04-12T00:00:00Z' };
    expect(await field({ ...range, step: 'hour' })).toBe('from');
    expect((await history(h, { ...range, step: 'day' })).status).toBe(200);
    expect((await history(h, { client_id: CONFIDENTIAL.id, api_path: 'ping' })).status).toBe(400);
    const unknown = await history(h, { client_id: 'nobody' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).not.toBe(0);
    expect((await h.http().get(`/admin/usage/history?client_id=${CONFIDENTIAL.id}`)).status).toBe(401);
  });
});

interface SharedStore {
  store(): QuotaStore;
  /**
   * Whether the point of the hour or day starting at `start`, written at START, is gone once its
   * retention ended, by the store's own means. `byTtl`: the store says it in advance, with a TTL.
   */
  retired(start: number, step: 'hour' | 'day', retention: HistoryRetention): Promise<boolean>;
  byTtl?: true;
  close(): Promise<void>;
}

function memoryStores(): SharedStore {
  const store = createMemoryQuotaStore();
  return {
    store: () => store,
    retired: async (start, step) => (await readPoints(store.history!, { clientId: CONFIDENTIAL.id, step, from: start, to: start + 1 })).length === 0,
    close: () => store.close(),
  };
}

function redisStores(): SharedStore {
  const client = new Redis(redisUrl!);
  const prefix = uniqueName('history');
  return {
    store: () => createRedisQuotaStore({ client, prefix }),
    byTtl: true,
    // Redis expires keys by its own clock, not the injected one: the TTL the write set says when it goes.
    async retired(start, step, retention) {
      const date = new Date(start);
      const [hash, end] = step === 'hour' ? [start - (start % DAY), start - (start % DAY) + DAY] : [Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)];
      const ttl = await client.pttl(`{${prefix}:h:${CONFIDENTIAL.id}}:${step}:${hash}`);
      const kept = (step === 'hour' ? retention.hourlyDays : retention.dailyDays) * DAY;
      return ttl > 0 && START + ttl <= end + kept;
    },
    async close() {
      await dropPrefix(client, prefix);
    },
  };
}

function postgresStores(): SharedStore {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const schema = uniqueName('history');
  return {
    store: () => createPostgresQuotaStore({ pool, schema }),
    async retired(start, step) {
      const { rows } = await pool.query(`SELECT 1 FROM "${schema}".courier_usage_history WHERE step = $1 AND bucket_start = $2`, [step, start]);
      return rows.length === 0;
    },
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

function twoPlatforms(label: string, open: () => SharedStore) {
  describe(`usage history on a shared ${label} store`, () => {
    let shared: SharedStore | undefined;
    afterAll(async () => shared?.close());

    const twoHosts = async (retention?: Partial<HistoryRetention>) => {
      const stores = (shared ??= open());
      const clock = testClock(START);
      const hosts = [await host('express', { store: stores.store(), clock, retention }), await host('express', { store: stores.store(), clock, retention })] as const;
      return { hosts, clock, stores };
    };

    it('calls through both platforms show up in one series within 10 s, 429s as rejected', async () => {
      const { hosts } = await twoHosts();
      const tokens = [(await accessToken(hosts[0], OTHER)).token, (await accessToken(hosts[1], OTHER)).token];
      for (let i = 0; i < 2; i += 1) expect((await ping(hosts[0], tokens[0])).status).toBe(200);
      for (let i = 0; i < 3; i += 1) await ping(hosts[1], tokens[1]);
      const hour = START - (START % HOUR);
      // The minute limit (4) is counted across both platforms: the fifth call is a 429.
      for (const h of hosts) await shows(h, { client_id: OTHER.id }, { [PING]: [{ at: iso(hour), admitted: 4, rejected: 1 }] });
    });

    it('rolls hours over on the hour and days at UTC midnight', async () => {
      const { hosts, clock } = await twoHosts();
      const tokens = [(await accessToken(hosts[0], CONFIDENTIAL)).token, (await accessToken(hosts[1], CONFIDENTIAL)).token];
      const day = START - (START % DAY);
      await ping(hosts[0], tokens[0]); // 08:30
      clock.set(day + 9 * HOUR + 10 * 60_000);
      await ping(hosts[1], tokens[1]); // 09:10
      await ping(hosts[0], tokens[0]);
      clock.set(day + DAY + 5 * 60_000);
      await ping(hosts[1], tokens[1]); // 00:05 the next day
      const query = { client_id: CONFIDENTIAL.id, from: iso(day + 8 * HOUR), to: iso(day + DAY + HOUR) };
      await shows(hosts[0], { ...query, step: 'hour' }, {
        [PING]: [
          { at: iso(day + 8 * HOUR), admitted: 1, rejected: 0 },
          { at: iso(day + 9 * HOUR), admitted: 2, rejected: 0 },
          { at: iso(day + DAY), admitted: 1, rejected: 0 },
        ],
      });
      const byDay = await history(hosts[1], { ...query, step: 'day' });
      expect(byDay.body.data.series[0].points).toEqual([
        { at: iso(day), admitted: 3, rejected: 0 },
        { at: iso(day + DAY), admitted: 1, rejected: 0 },
      ]);
    });

    it('forgets hours and days older than the retention', async () => {
      const retention = { hourlyDays: 1, dailyDays: 2 };
      const { hosts, clock, stores } = await twoHosts(retention);
      const { token } = await accessToken(hosts[0], CONFIDENTIAL);
      const day = START - (START % DAY);
      const hour = START - (START % HOUR);
      await postOrder(hosts[0], token);
      await shows(hosts[0], { client_id: CONFIDENTIAL.id, api_path: ORDERS, step: 'day', from: iso(day) }, { [ORDERS]: [{ at: iso(day), admitted: 1, rejected: 0 }] });
      if (!stores.byTtl) expect(await stores.retired(hour, 'hour', retention)).toBe(false);
      clock.advance(3 * DAY);
      await postOrder(hosts[0], token);
      const now = hour + 3 * DAY;
      await shows(hosts[0], { client_id: CONFIDENTIAL.id, api_path: ORDERS, step: 'day', from: iso(day) }, { [ORDERS]: [{ at: iso(now - (now % DAY)), admitted: 1, rejected: 0 }] });
      const hourly = await history(hosts[1], { client_id: CONFIDENTIAL.id, api_path: ORDERS, from: iso(day), to: iso(now + HOUR) });
      // The answer starts where the retention does: one day of hours before this one.
      expect(hourly.body.data.series[0].points[0].at).toBe(iso(now - DAY));
      expect(busy(hourly.body.data.series)).toEqual({ [ORDERS]: [{ at: iso(now), admitted: 1, rejected: 0 }] });
      expect(await stores.retired(hour, 'hour', retention)).toBe(true);
      expect(await stores.retired(day, 'day', retention)).toBe(true);
    });
  });
}

twoPlatforms('memory', memoryStores);
describeRedis('Redis', () => twoPlatforms('Redis', redisStores));
describePostgres('PostgreSQL', () => twoPlatforms('PostgreSQL', postgresStores));

describe('platform.close()', () => {
  it('writes the calls not yet flushed, so a process that stops loses none', async () => {
    const store = createMemoryQuotaStore();
    const platform = createPlatform({
      oauth: false,
      courier: false,
      logger: silentLogger,
      now: () => START,
      // An interval far longer than the test: only close() can have written the call.
      quota: { store, verifyToken: () => ({ clientId: 'app', scope: [] }), history: { flushIntervalMs: 9000 } },
    });
    const verdict = await platform.guard!({ method: 'GET', path: PING, query: new URLSearchParams(), headers: { authorization: 'Bearer any' } } as unknown as PlatformRequest);
    expect(verdict.pass).toBe(true);
    const read = () => readPoints(store.history!, { clientId: 'app', step: 'hour', from: START - HOUR, to: START + HOUR });
    expect(await read()).toEqual([]);
    await platform.close();
    expect((await read()).map((point) => point.admitted)).toEqual([1]);
  });
});

describe('quota.history options', () => {
  it.each([
    [{ hourlyDays: 0 }, 'quota.history.hourlyDays'],
    [{ dailyDays: 1.5 }, 'quota.history.dailyDays'],
    [{ flushIntervalMs: 10_000 }, 'quota.history.flushIntervalMs'],
    [{ keepDays: 3 }, 'quota.history.keepDays'],
  ])('refuses %j at start, naming %s', (history, field) => {
    expect(() => createPlatform({ courier: false, logger: silentLogger, quota: { history: history as never } })).toThrow(field);
  });

  it('history: false has no history route', async () => {
    const store = createMemoryQuotaStore();
    const h = await startHost('express', { quota: { store, history: false }, clock: testClock(START), platform: { admin: { token: TOKEN } } });
    const { token } = await accessToken(h, CONFIDENTIAL);
    expect((await ping(h, token)).status).toBe(200);
    expect((await history(h, { client_id: CONFIDENTIAL.id })).status).toBe(404);
  });
});

describe('a history store that fails', () => {
  it('never fails a guarded call, warns once, and writes the kept counts once it answers', async () => {
    const memory = createMemoryQuotaStore();
    let down = true;
    const store: QuotaStore = {
      kind: 'flaky',
      consume: (request) => memory.consume(request),
      consumeSync: (request) => memory.consumeSync(request),
      peek: (request) => memory.peek(request),
      history: {
        kind: 'flaky',
        async add(...args) {
          if (down) throw new Error('history store down');
          return memory.history!.add(...args);
        },
        read: (...args) => memory.history!.read(...args),
      },
    };
    const logger = capturingLogger();
    const h = await startHost('express', { quota: { store, history: { flushIntervalMs: FLUSH_MS } }, clock: testClock(START), logger, platform: { admin: { token: TOKEN } } });
    const { token } = await accessToken(h, CONFIDENTIAL);
    for (let i = 0; i < 3; i += 1) expect((await ping(h, token)).status).toBe(200);
    const failed = () => logger.records.filter((record) => record.message.startsWith('usage history: a flush failed'));
    await vi.waitFor(() => expect(failed()).toHaveLength(1), { timeout: 10_000 });
    expect((await ping(h, token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 4 * FLUSH_MS));
    expect(failed()).toHaveLength(1);
    down = false;
    await shows(h, { client_id: CONFIDENTIAL.id }, { [PING]: [{ at: iso(START - (START % HOUR)), admitted: 4, rejected: 0 }] });
  });

  it('reads a history store of one round trip that resolves with its points instead of handing them over', async () => {
    const memory = createMemoryQuotaStore();
    const store: QuotaStore = {
      kind: 'custom',
      consume: (request) => memory.consume(request),
      consumeSync: (request) => memory.consumeSync(request),
      peek: (request) => memory.peek(request),
      history: { kind: 'custom', add: (...args) => memory.history!.add(...args), read: (query) => readPoints(memory.history!, query) },
    };
    const h = await startHost('express', { quota: { store, history: { flushIntervalMs: FLUSH_MS } }, clock: testClock(START), platform: { admin: { token: TOKEN } } });
    const { token } = await accessToken(h, CONFIDENTIAL);
    for (let i = 0; i < 2; i += 1) expect((await ping(h, token)).status).toBe(200);
    await shows(h, { client_id: CONFIDENTIAL.id }, { [PING]: [{ at: iso(START - (START % HOUR)), admitted: 2, rejected: 0 }] });
  });
});
