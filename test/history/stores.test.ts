/**
 * The usage history stores (src/history): what two processes add is read back by hour and day,
 * per endpoint; retention; round trips per flush; the PostgreSQL table in the quota migration;
 * a Redis Cluster with the applications spread over its masters.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationSql } from '../../src/cli/migrate.js';
import { createMemoryQuotaStore, createPostgresQuotaStore, createRedisQuotaStore, quotaMigrationSql, type QuotaStore } from '../../src/quota/index.js';
import { databaseUrl, describePostgres, describeRedis, redisForBlock, uniqueName } from '../support/services.js';
import { count, DAY, historyOf, HOUR, readPoints, RETENTION, T } from './fixtures.js';

const byStart = <P extends { start: number; apiPath: string }>(points: P[]) => [...points].sort((a, b) => a.start - b.start || a.apiPath.localeCompare(b.apiPath));

/** Every store: two instances on the same data, as two processes. */
function describeHistoryStore(name: string, make: () => QuotaStore) {
  describe(`usage history on ${name}`, () => {
    const opened = { make };

    it('adds what two processes counted, by hour and by UTC day, per endpoint', async () => {
      const [one, two] = [historyOf(opened.make()), historyOf(opened.make())];
      const app = uniqueName('app');
      await one.add([count(app, '/a', T, 2, 1), count(app, '/b', T, 1), count(app, '/a', T + HOUR, 1)], T + HOUR, RETENTION);
      await two.add([count(app, '/a', T, 3), count(app, '/a', T + 2 * HOUR, 0, 4), count('someone-else', '/a', T, 9)], T + 2 * HOUR, RETENTION);

      const hours = await readPoints(one, { clientId: app, step: 'hour', from: T, to: T + 3 * HOUR });
      expect(byStart(hours)).toEqual([
        { apiPath: '/a', step: 'hour', start: T, admitted: 5, rejected: 1 },
        { apiPath: '/b', step: 'hour', start: T, admitted: 1, rejected: 0 },
        { apiPath: '/a', step: 'hour', start: T + HOUR, admitted: 1, rejected: 0 },
        { apiPath: '/a', step: 'hour', start: T + 2 * HOUR, admitted: 0, rejected: 4 },
      ]);
      const days = await readPoints(two, { clientId: app, apiPath: '/a', step: 'day', from: T - 22 * HOUR, to: T + 2 * DAY });
      expect(byStart(days)).toEqual([
        { apiPath: '/a', step: 'day', start: T - 22 * HOUR, admitted: 6, rejected: 1 },
        { apiPath: '/a', step: 'day', start: T + 2 * HOUR, admitted: 0, rejected: 4 },
      ]);
      // The range is [from, to).
      expect(await readPoints(one, { clientId: app, step: 'hour', from: T + HOUR, to: T + 2 * HOUR })).toHaveLength(1);
    });

    it('does not write hours or days already past their retention', async () => {
      const history = historyOf(opened.make());
      const app = uniqueName('old');
      const now = T + 2 * DAY;
      await history.add([count(app, '/a', T - 3 * DAY, 1)], now, { hourlyDays: 1, dailyDays: 2 });
      expect(await readPoints(history, { clientId: app, step: 'hour', from: 0, to: now })).toEqual([]);
      expect(await readPoints(history, { clientId: app, step: 'day', from: 0, to: now })).toEqual([]);
    });
  });
}

const memory = createMemoryQuotaStore();
describeHistoryStore('memory', () => memory);

describeRedis('Redis', () => {
  const { client, prefix } = redisForBlock('history_store');
  describeHistoryStore('Redis', () => createRedisQuotaStore({ client, prefix }));

  it('sends a flush of many applications as one pipeline', async () => {
    let pipelines = 0;
    const counted = new Proxy(client, {
      get(target, key, receiver) {
        if (key === 'pipeline') return () => (pipelines++, target.pipeline());
        return Reflect.get(target, key, receiver);
      },
    });
    const history = historyOf(createRedisQuotaStore({ client: counted, prefix }));
    await history.add(Array.from({ length: 50 }, (_, i) => count(`many-${i}`, '/a', T, 1)), T, RETENTION);
    expect(pipelines).toBe(1);
  });
});

describePostgres('PostgreSQL', () => {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const schemas: string[] = [];
  const schema = () => {
    schemas.push(uniqueName('history'));
    return schemas.at(-1)!;
  };
  const shared = schema();
  afterAll(async () => {
    for (const name of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await pool.end();
  });
  describeHistoryStore('PostgreSQL', () => createPostgresQuotaStore({ pool, schema: shared }));

  it('writes a flush in one statement, and deletes old rows at most once an hour', async () => {
    const own = schema();
    const store = createPostgresQuotaStore({ pool, schema: own });
    await store.migrate();
    const statements: string[] = [];
    const counted = { query: (text: string, values?: unknown[]) => (statements.push(text.split(/\s/)[0]!), pool.query(text, values)), connect: () => pool.connect() };
    const history = historyOf(createPostgresQuotaStore({ pool: counted, schema: own, migrate: false }));
    const rows = Array.from({ length: 50 }, (_, i) => count(`many-${i}`, '/a', T, 1));
    await history.add(rows, T, RETENTION);
    expect(statements).toEqual(['INSERT', 'DELETE']);
    await history.add(rows, T + 10_000, RETENTION);
    expect(statements).toEqual(['INSERT', 'DELETE', 'INSERT']);
    await history.add(rows, T + HOUR, RETENTION);
    expect(statements.slice(3)).toEqual(['INSERT', 'DELETE']);
  });

  it('reads a long range a day of buckets a statement, each told to the call, every point once', async () => {
    const history = historyOf(createPostgresQuotaStore({ pool, schema: shared }));
    const app = uniqueName('long');
    // 400 hours: 17 statements of up to 24 hours, points at the edges between them.
    const hours = [0, 23, 24, 47, 48, 383, 384, 399];
    await history.add(hours.map((h) => count(app, '/a', T + h * HOUR, h + 1)), T + 399 * HOUR, RETENTION);
    let answered = 0;
    const points = await readPoints(history, { clientId: app, step: 'hour', from: T, to: T + 400 * HOUR }, { waiting() {}, sent() {}, answered: () => answered++, failing: false });
    expect(byStart(points).map((p) => [(p.start - T) / HOUR, p.admitted])).toEqual(hours.map((h) => [h, h + 1]));
    expect(answered).toBe(17);
  });

  it('finds its table made by quotaMigrationSql and by `courier-platform migrate`', async () => {
    const own = schema();
    expect(migrationSql(own)).toContain(`"${own}"."courier_usage_history"`);
    await pool.query(quotaMigrationSql({ schema: own }));
    const history = historyOf(createPostgresQuotaStore({ pool, schema: own, migrate: false }));
    await history.add([count('app', '/a', T, 1)], T, RETENTION);
    expect(await readPoints(history, { clientId: 'app', step: 'day', from: 0, to: T + DAY })).toHaveLength(1);
  });
});

