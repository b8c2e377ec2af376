/**
 * Quota events through `onEvent` (docs/operator.md#events): a period crossing 80 % and 100 % of
 * its limit is told once, by the call that crossed it, and a refused call is told as
 * `quota.exceeded`. Through HTTP on every adapter, and with two platforms bursting at one Redis or
 * PostgreSQL store at once: still exactly one event per crossing.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { PlatformEvent } from '../../src/options.js';
import { createPlatform } from '../../src/platform.js';
import type { QuotaEvent } from '../../src/quota/events.js';
import { createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { accessToken, ADAPTER_NAMES, closeHosts, CONFIDENTIAL, PING, ping, startHost } from '../http/quota-helpers.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';

afterEach(closeHosts);

const strip = (events: PlatformEvent[]) =>
  events.filter((event): event is QuotaEvent => event.type.startsWith('quota.')).map(({ at: _at, ...event }) => event);

describe.each(ADAPTER_NAMES)('quota events on %s', (adapter) => {
  it('tells 80 % and 100 % of the minute once each, then every refused call', async () => {
    const events: PlatformEvent[] = [];
    const host = await startHost(adapter, {
      quota: { rules: [{ scope: 'global', apiPath: PING, minute: 5 }] },
      platform: {
        onEvent: (event) => {
          events.push(event);
          throw new Error('a broken hook changes nothing');
        },
      },
    });
    const { token } = await accessToken(host, CONFIDENTIAL);
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await ping(host, token)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const base = { clientId: CONFIDENTIAL.id, apiPath: PING, period: 'minute', limit: 5 };
    expect(strip(events)).toEqual([
      { type: 'quota.threshold', ...base, used: 4, threshold: 80 },
      { type: 'quota.threshold', ...base, used: 5, threshold: 100 },
      { type: 'quota.exceeded', ...base, used: 5 },
      { type: 'quota.exceeded', ...base, used: 5 },
    ]);
    expect(events.every((event) => typeof event.at === 'number')).toBe(true);
  });
});

/** Two platforms (two processes' worth) on one store, each firing `calls` guarded calls at once. */
async function burstOfTwo(open: () => QuotaStore, calls: number): Promise<Omit<QuotaEvent, 'at'>[]> {
  const events: PlatformEvent[] = [];
  const platforms = [open(), open()].map((store) =>
    createPlatform({
      courier: false,
      oauth: false,
      logger: silentLogger,
      onEvent: (event) => void events.push(event),
      quota: { store, verifyToken: () => ({ clientId: 'burst-app', scope: [] }), rules: [{ scope: 'global', apiPath: PING, minute: 50 }] },
    }),
  );
  const request = { method: 'GET', path: PING, query: new URLSearchParams(), headers: { authorization: 'Bearer any' } };
  const verdicts = await Promise.all(platforms.flatMap((platform) => Array.from({ length: calls }, () => platform.guard!(request))));
  expect(verdicts.filter((verdict) => verdict.pass)).toHaveLength(50);
  return strip(events);
}

function expectOnePerCrossing(events: Omit<QuotaEvent, 'at'>[]): void {
  const minute = events.filter((event) => event.period === 'minute');
  // Two platforms answer in whatever order their calls come back: which crossing is heard first is not fixed.
  const crossings = minute.filter((event) => event.type === 'quota.threshold').map((event) => [event.threshold, event.used]);
  expect(crossings.sort((a, b) => a[0]! - b[0]!)).toEqual([
    [80, 40],
    [100, 50],
  ]);
  expect(minute.filter((event) => event.type === 'quota.exceeded')).toHaveLength(30);
}

describeRedis('quota events on a shared Redis store', () => {
  const prefix = uniqueName('quota_events');
  const clients: Redis[] = [];
  afterAll(async () => {
    const keys = await clients[0]!.keys(`{${prefix}:*`);
    if (keys.length > 0) await clients[0]!.del(...keys);
    await Promise.all(clients.map((client) => client.quit()));
  });
  it('two platforms bursting at one counter: each crossing told exactly once', async () => {
    const open = () => {
      const client = new Redis(redisUrl!);
      clients.push(client);
      return createRedisQuotaStore({ client, prefix });
    };
    expectOnePerCrossing(await burstOfTwo(open, 40));
  });
});

describePostgres('quota events on a shared PostgreSQL store', () => {
  const schema = uniqueName('quota_events');
  const pools: pg.Pool[] = [];
  afterAll(async () => {
    await pools[0]!.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await Promise.all(pools.map((pool) => pool.end()));
  });
  it('two platforms bursting at one counter: each crossing told exactly once', async () => {
    const open = () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
      pools.push(pool);
      return createPostgresQuotaStore({ pool, schema });
    };
    expectOnePerCrossing(await burstOfTwo(open, 40));
  });
});
