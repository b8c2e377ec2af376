/**
 * What only the PostgreSQL quota store can get wrong: its migration, statements, schema and
 * clean-up. The behaviour it shares with the others is in stores.test.ts.
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createPostgresQuotaStore, createQuotaService, quotaMigrationSql } from '../../src/quota/index.js';
import { describePostgres, uniqueName } from '../support/services.js';
import { buckets, dropSchema, newPool } from './store-helpers.js';

describePostgres('postgres quota store', () => {
  let pool: pg.Pool;
  const schemas: string[] = [];
  const freshSchema = (): string => {
    const schema = uniqueName('quota_pg');
    schemas.push(schema);
    return schema;
  };
  beforeAll(() => {
    pool = newPool(10);
  });
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  const tableExists = async (schema: string): Promise<boolean> => {
    const { rows } = await pool.query('SELECT to_regclass($1) AS t', [`"${schema}".courier_quota_counter`]);
    return rows[0]?.t !== null;
  };

  it('migrates idempotently, and concurrently from many processes without a conflict', async () => {
    const schema = freshSchema();
    const stores = Array.from({ length: 6 }, () => createPostgresQuotaStore({ pool, schema }));
    await Promise.all(stores.map((store) => store.migrate()));
    await stores[0]!.migrate();
    await stores[0]!.migrate();
    expect(await tableExists(schema)).toBe(true);
  });

  it('migrates on first use unless told not to; the published SQL creates the same table', async () => {
    const schema = freshSchema();
    const now = Date.UTC(2026, 10, 21, 10);
    const manual = createPostgresQuotaStore({ pool, schema, migrate: false });
    await expect(manual.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now })).rejects.toThrow(/does not exist/);
    expect(await tableExists(schema)).toBe(false);
    await pool.query(quotaMigrationSql({ schema }));
    await pool.query(quotaMigrationSql({ schema })); // idempotent too
    expect(await manual.consume({ clientId: 'a', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now })).toEqual({ admitted: true, used: [1] });

    const automatic = freshSchema();
    const store = createPostgresQuotaStore({ pool, schema: automatic });
    expect(await store.peek({ clientId: 'a', apiPath: '/x', buckets: buckets(now, 5), now })).toEqual([0]);
    expect(await tableExists(automatic)).toBe(true);
  });

  it('deletes expired rows on demand and opportunistically, never the live ones', async () => {
    const schema = freshSchema();
    const store = createPostgresQuotaStore({ pool, schema, cleanupIntervalMs: 1, cleanupBatchSize: 2, expiryGraceMs: 0 });
    let now = Date.UTC(2026, 0, 10, 12);
    const quota = createQuotaService({ store, now: () => now, logger: silentLogger });
    for (const id of ['a', 'b', 'c']) await quota.consume(id, '/openapi/v1/orders'); // 9 rows, 3 per client
    const rows = async (): Promise<number> => Number((await pool.query(`SELECT count(*)::int AS n FROM ${store.tableName}`)).rows[0].n);
    await store.close();
    expect(await rows()).toBe(9);
    // a day later, the minute and day rows have ended, the January rows have not
    now = Date.UTC(2026, 0, 11, 12);
    expect(await store.deleteExpired(now)).toBe(6);
    expect(await rows()).toBe(3);
    // in March every January row has ended: the next consume cleans up a batch by itself
    now = Date.UTC(2026, 2, 1, 12);
    await quota.consume('d', '/openapi/v1/orders');
    await store.close(); // waits for the clean-up in flight
    expect(await rows()).toBe(3 + 3 - 2);
    expect(await store.deleteExpired(now)).toBe(1);
    expect(await rows()).toBe(3);
    const still = await quota.inspect('d', '/openapi/v1/orders');
    expect(still.outcome === 'ok' && still.report.periods.map((p) => p.used)).toEqual([1, 1, 1]);
  });

  it("lists and resets an application of 30,003 counters 10,000 a statement, each told to the call, and no other application's", async () => {
    const schema = freshSchema();
    const store = createPostgresQuotaStore({ pool, schema });
    await store.migrate();
    // 10,001 paths of three periods each, the rows a guard that names no endpoint makes of made-up paths.
    await pool.query(`INSERT INTO ${store.tableName} SELECT 'big', '/openapi/v1/p' || (i / 3), (ARRAY['minute','day','month'])[i % 3 + 1], 1, 9999999999999, 1 FROM generate_series(0, 30002) i`);
    await pool.query(`INSERT INTO ${store.tableName} VALUES ('other', '/openapi/v1/p0', 'day', 1, 9999999999999, 1)`);
    let answered = 0;
    const call = { waiting() {}, sent() {}, answered: () => answered++, failing: false };
    const paths = await store.usage!.paths('big', 0, call);
    expect([paths.length, new Set(paths).size, answered]).toEqual([10_001, 10_001, 2]);
    answered = 0;
    expect(await store.usage!.reset('big', undefined, call)).toBe(10_001);
    expect(answered).toBe(4);
    expect(await store.usage!.paths('big', 0)).toEqual([]);
    expect(await store.usage!.paths('other', 0)).toEqual(['/openapi/v1/p0']);
  });

  it('gives up on a counter row another connection holds for too long (lock_timeout), failing every call of the batch, instead of hanging', async () => {
    const schema = freshSchema();
    const store = createPostgresQuotaStore({ pool, schema, lockTimeoutMs: 200 });
    const now = Date.UTC(2026, 10, 21, 10);
    const quota = createQuotaService({ store, now: () => now, logger: silentLogger, onStoreError: 'closed', storeTimeoutMs: 5000 });
    expect((await quota.consume('held', '/openapi/v1/orders')).outcome).toBe('admitted');
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT used FROM ${store.tableName} WHERE client_id = 'held' FOR UPDATE`);
      const started = performance.now();
      const blocked = await Promise.all([1, 2, 3].map(() => quota.consume('held', '/openapi/v1/orders')));
      for (const decision of blocked) {
        expect(decision.outcome).toBe('store_unavailable');
        expect(decision.outcome === 'store_unavailable' && decision.error.message).toMatch(/lock timeout/);
      }
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const after = await quota.consume('held', '/openapi/v1/orders');
    expect(after.outcome === 'admitted' && after.periods.map((p) => p.used)).toEqual([2, 2, 2]);
  });

  /** The pool, counting the consume statements it runs. */
  function countingPool(): { pool: pg.Pool; statements: () => number } {
    let statements = 0;
    const counted = new Proxy(pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return (text: string, values?: unknown[]) => {
          if (/_consume"\(/.test(text)) statements++;
          return target.query(text, values);
        };
      },
    });
    return { pool: counted, statements: () => statements };
  }

  it('sends the calls of one turn for one client and path as one statement, admitting in arrival order while they fit, each with its own counts', async () => {
    const { pool: counted, statements } = countingPool();
    const store = createPostgresQuotaStore({ pool: counted, schema: freshSchema() });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = (cost: number) => store.consume({ clientId: 'together', apiPath: '/x', cost, buckets: buckets(now, 30), now });
    const results = await Promise.all(Array.from({ length: 50 }, () => call(1)));
    expect(statements()).toBe(1);
    expect(results.slice(0, 30)).toEqual(Array.from({ length: 30 }, (_, i) => ({ admitted: true, used: [i + 1] })));
    expect(results.slice(30)).toEqual(Array.from({ length: 20 }, () => ({ admitted: false, used: [30] })));

    // A call that does not fit is skipped, and a later, cheaper one still gets the room left.
    const mixed = await Promise.all([5, 5, 3, 5, 1].map((cost) => store.consume({ clientId: 'mixed', apiPath: '/x', cost, buckets: buckets(now, 12), now })));
    expect(statements()).toBe(2);
    expect(mixed).toEqual([
      { admitted: true, used: [5] },
      { admitted: true, used: [10] },
      { admitted: false, used: [10] },
      { admitted: false, used: [10] },
      { admitted: true, used: [11] },
    ]);
    expect(await store.peek({ clientId: 'mixed', apiPath: '/x', buckets: buckets(now, 12), now })).toEqual([11]);
  });

  it('sends calls of other clients, paths, buckets or limits in the same turn as statements of their own', async () => {
    const { pool: counted, statements } = countingPool();
    const store = createPostgresQuotaStore({ pool: counted, schema: freshSchema() });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = (clientId: string, apiPath: string, limit: number, at = now) => store.consume({ clientId, apiPath, cost: 1, buckets: buckets(at, limit), now });
    const results = await Promise.all([
      call('a', '/x', 1),
      call('b', '/x', 1),
      call('a', '/y', 1),
      call('a', '/x', 1, now + 60_000), // the next minute: another row
      call('a', '/x', 1),
      call('b', '/x', 1),
      call('c', '/x', 5),
      call('c', '/x', 6), // another limit: its own statement, on the same row
    ]);
    expect(statements()).toBe(6);
    expect(results.slice(0, 6)).toEqual([
      { admitted: true, used: [1] },
      { admitted: true, used: [1] },
      { admitted: true, used: [1] },
      { admitted: true, used: [1] },
      { admitted: false, used: [1] },
      { admitted: false, used: [1] },
    ]);
    expect(results.slice(6).map((r) => r.admitted)).toEqual([true, true]);
    expect(results.slice(6).map((r) => r.used[0]).sort()).toEqual([1, 2]);
  });

  /** The pool, holding back each consume statement until the test lets it go. */
  function holdingPool() {
    const held: { calls: number; release: () => void }[] = [];
    const counted = new Proxy(pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (text: string, values?: unknown[]) => {
          if (/_consume"\(/.test(text)) {
            await new Promise<void>((release) => held.push({ calls: (values![6] as number[]).length, release }));
          }
          return target.query(text, values);
        };
      },
    });
    return { pool: counted, held };
  }
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  /** Lets the event loop turn until `done()` holds (at most 1000 turns). */
  const until = async (done: () => boolean): Promise<void> => {
    for (let i = 0; i < 1000 && !done(); i++) await nextTurn();
    expect(done()).toBe(true);
  };

  it('while a statement of a client and path is in flight, holds their next calls back and sends them together as the next one', async () => {
    const { pool: holding, held } = holdingPool();
    const store = createPostgresQuotaStore({ pool: holding, schema: freshSchema(), migrate: false });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = (clientId = 'queued') => store.consume({ clientId, apiPath: '/x', cost: 1, buckets: buckets(now, 3), now });
    const first = call();
    await until(() => held.length === 1);
    const later = [call()];
    await nextTurn();
    later.push(call(), call());
    const other = call('someone-else'); // another client is not held back
    await until(() => held.length === 2);
    for (let i = 0; i < 10; i++) await nextTurn();
    expect(held.map((statement) => statement.calls)).toEqual([1, 1]);
    held[1]!.release();
    expect(await other).toEqual({ admitted: true, used: [1] });
    held[0]!.release();
    expect(await first).toEqual({ admitted: true, used: [1] });
    await until(() => held.length === 3);
    expect(held.map((statement) => statement.calls)).toEqual([1, 1, 3]);
    held[2]!.release();
    expect(await Promise.all(later)).toEqual([
      { admitted: true, used: [2] },
      { admitted: true, used: [3] },
      { admitted: false, used: [3] },
    ]);
    await store.close();
  });

  it('stops holding calls back behind a statement that has not answered for a second', async () => {
    const { pool: holding, held } = holdingPool();
    const store = createPostgresQuotaStore({ pool: holding, schema: freshSchema(), migrate: false });
    await store.migrate();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const call = () => store.consume({ clientId: 'stalled', apiPath: '/x', cost: 1, buckets: buckets(now, 5), now });
    const stalled = call();
    await until(() => held.length === 1);
    const heldBack = call();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(held).toHaveLength(1);
    const after = call();
    await until(() => held.length === 2);
    expect(held.map((statement) => statement.calls)).toEqual([1, 2]); // the held-back call goes with the next one
    held[1]!.release();
    expect(await Promise.all([heldBack, after])).toEqual([
      { admitted: true, used: [1] },
      { admitted: true, used: [2] },
    ]);
    held[0]!.release();
    expect(await stalled).toEqual({ admitted: true, used: [3] });
    await store.close();
  });

  it('migrates a counter table that already holds counts without losing them', async () => {
    const schema = freshSchema();
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const [bucket] = buckets(now, 10);
    // The table alone, as a store without the consume function left it.
    await pool.query(`CREATE SCHEMA "${schema}"`);
    await pool.query(`CREATE TABLE "${schema}".courier_quota_counter (
      client_id text NOT NULL, api_path text NOT NULL, period text NOT NULL, bucket_start bigint NOT NULL, bucket_end bigint NOT NULL,
      used bigint NOT NULL DEFAULT 0 CHECK (used >= 0), PRIMARY KEY (client_id, api_path, period, bucket_start))`);
    await pool.query(`INSERT INTO "${schema}".courier_quota_counter VALUES ('kept', '/x', 'minute', $1, $2, 9)`, [bucket!.start, bucket!.end]);
    const store = createPostgresQuotaStore({ pool, schema });
    const call = () => store.consume({ clientId: 'kept', apiPath: '/x', cost: 1, buckets: buckets(now, 10), now });
    expect(await call()).toEqual({ admitted: true, used: [10] });
    expect(await call()).toEqual({ admitted: false, used: [10] });
  });

  const invalidOption = (field: string) => expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_option', field });

  it('rejects schema and table names that are not plain lower-case identifiers, naming the option', () => {
    for (const schema of ['Public', 'a-b', '1abc', 'x"; DROP TABLE y; --', '']) {
      expect(() => createPostgresQuotaStore({ pool, schema }), schema).toThrow(invalidOption('schema'));
    }
    expect(() => createPostgresQuotaStore({ pool, table: 'quota counter' })).toThrow(invalidOption('table'));
    expect(() => quotaMigrationSql({ schema: 'BAD' })).toThrow(invalidOption('schema'));
  });

  it.each<[string, Record<string, unknown>]>([
    ['pool', { pool: { query: async () => ({ rows: [] }) } }],
    ['cleanupIntervalMs', { cleanupIntervalMs: -1 }],
    ['cleanupBatchSize', { cleanupBatchSize: 0 }],
    ['expiryGraceMs', { expiryGraceMs: 1.5 }],
    ['lockTimeoutMs', { lockTimeoutMs: 2 ** 31 }],
  ])('rejects a bad %s, naming it', (field, options) => {
    expect(() => createPostgresQuotaStore({ pool, ...options } as Parameters<typeof createPostgresQuotaStore>[0])).toThrow(invalidOption(field));
  });
});
