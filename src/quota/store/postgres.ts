/**
 * Quota counters in PostgreSQL, shared by every process of the platform.
 *
 * A guarded call is one autocommit statement calling a PL/pgSQL function, which checks every
 * period and charges all or none, exactly under READ COMMITTED and without deadlocks
 * (postgres-sql.ts says how). The calls of one client, path and set of buckets that arrive in
 * the same turn of the event loop, or while a statement of theirs is in flight, go together as
 * ONE statement (batches.ts), which admits as many as fit in arrival order and answers each call
 * its own verdict and counts. One round trip, one commit and one new row version per period then
 * serve the whole batch, where one call per statement would queue every call of a client and
 * path on the same row locks.
 *
 * A batch takes a connection through the pool's lane (core/store-lane.ts), the queue the OAuth
 * store and the admin API share on the same pool; its calls' deadlines start when it has one.
 */
import { configurationError } from '../../core/errors.js';
import { migrateOnce, migrationLockSql } from '../../core/pg-migration.js';
import type { PgPoolLike } from '../../core/store-clients.js';
import { StoreFailedError } from '../../core/store-errors.js';
import { createPostgresHistoryStore, historyMigrationSql } from '../../history/postgres.js';
import { pgConnection, type StoreConnection } from '../../core/store-connection.js';
import type { StoreCall } from '../../core/store-guard.js';
import { batcher, type Batch } from './batches.js';
import { DEFAULT_SCHEMA, DEFAULT_TABLE, quotaSql } from './postgres-sql.js';
import { postgresUsage } from './postgres-usage.js';
import type { MatchedRules } from '../rules.js';
import { checkConsumeRequest, QUOTA_STORE_NAME, ruleKey, storedRule, storedRuleEntries, type ConsumeRequest, type ConsumeResult, type PeekRequest, type QuotaStore } from './types.js';

export { quotaMigrationSql } from './postgres-sql.js';

export interface PostgresQuotaStoreOptions {
  /**
   * A `pg.Pool`, ideally with a short `connectionTimeoutMillis` so calls fail fast while the
   * database is away, and a `query_timeout` (a few seconds) so a server that stops answering
   * without closing its connections does not hold them (docs/deployment.md#postgresql-pools).
   * Give the pool an `'error'` listener: pg emits one for an idle connection
   * that breaks, and an unhandled `'error'` event ends a Node process.
   */
  pool: PgPoolLike;
  /** Schema of the counter table; created when missing. Default `courier_platform` (the OAuth store's too). Lower-case identifier. */
  schema?: string;
  /** Default `courier_quota_counter`; the consume function is `<table>_consume`. Lower-case identifier. */
  table?: string;
  /** Run the (idempotent) migration on first use. Default true; false when you run `migrate()` or `quotaMigrationSql()` yourself. */
  migrate?: boolean;
  /** How often (by the service clock) a consume also starts, without waiting for it, the deletion of one batch of expired rows, in ms. Default 60 000; 0 = never. */
  cleanupIntervalMs?: number;
  /** Rows deleted per clean-up batch. Default 1000. */
  cleanupBatchSize?: number;
  /**
   * `false` runs each consume with `synchronous_commit = off`: the commit does not wait for the
   * WAL flush; a database crash may then forget the last few hundred milliseconds of counts
   * (never over-count). Default true: the server's own setting applies.
   */
  synchronousCommit?: boolean;
  /**
   * `lock_timeout` of a consume, in ms (default 2000; 0 = the server's). A call waiting longer
   * for a counter row fails (and the guard follows `onStoreError`) instead of piling up.
   */
  lockTimeoutMs?: number;
  /**
   * A row is deleted only this long after its bucket's end (ms, default 5000), so an
   * application server whose clock runs a little behind still finds the count.
   */
  expiryGraceMs?: number;
}

export interface PostgresQuotaStore extends QuotaStore {
  readonly kind: 'postgres';
  readonly connection: StoreConnection;
  readonly queuesCalls: true;
  prepare(): Promise<void>;
  /** `"schema"."table"`, quoted. */
  readonly tableName: string;
  /** Creates the schema, table, index and consume function if missing. Idempotent; safe to run from many processes at once. */
  migrate(): Promise<void>;
  /** Deletes rows whose bucket ended more than `expiryGraceMs` before `now` (default: the current time); returns how many. */
  deleteExpired(now?: number): Promise<number>;
  /** Waits for the statements and the clean-up in flight. Never ends the pool. */
  close(): Promise<void>;
}

/** Names this store in a StoreFailedError for an answer it cannot read. */
const STORE = 'quota store (postgres)';

function toNumber(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) throw new StoreFailedError(STORE, `unexpected counter value ${String(value)}`);
  return n;
}

const noop = (): void => {};

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw configurationError('invalid_option', name, 'must be a non-negative integer (createPostgresQuotaStore)');
  return value;
}

interface Call {
  cost: number;
  resolve: (result: ConsumeResult) => void;
  reject: (error: unknown) => void;
  /** Hears when the batch goes to the database. */
  guarded: StoreCall | undefined;
  /** When the call began to wait here (performance.now()). */
  since: number;
}

/**
 * A batch in flight this long (ms) no longer holds the next calls of its client and path back:
 * no longer than the quota service waits for a store by default.
 */
const STALLED_MS = 1000;

/** Calls share a statement only when they share every row and every limit. */
function batchKey({ clientId, apiPath, buckets }: ConsumeRequest): string {
  let key = `${clientId}\u0000${apiPath}`;
  for (const b of buckets) key += `\u0000${b.period}:${b.start}:${b.end}:${b.limit}`;
  return key;
}

/**
 * @example
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 1000, query_timeout: 5000 });
 * pool.on('error', () => {}); // idle connections that break are replaced; see the option's note
 * const service = createQuotaService({ store: createPostgresQuotaStore({ pool }) });
 */
export function createPostgresQuotaStore(options: PostgresQuotaStoreOptions): PostgresQuotaStore {
  const pool = options?.pool;
  if (!pool || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
    throw configurationError('invalid_option', 'pool', 'must be a pg.Pool, with query and connect (createPostgresQuotaStore)');
  }
  const schemaName = options.schema ?? DEFAULT_SCHEMA;
  const tableBase = options.table ?? DEFAULT_TABLE;
  const sql = quotaSql(schemaName, tableBase);
  const autoMigrate = options.migrate ?? true;
  const cleanupIntervalMs = nonNegativeInteger(options.cleanupIntervalMs ?? 60_000, 'cleanupIntervalMs');
  const cleanupBatchSize = options.cleanupBatchSize ?? 1000;
  if (!Number.isSafeInteger(cleanupBatchSize) || cleanupBatchSize < 1) throw configurationError('invalid_option', 'cleanupBatchSize', 'must be a positive integer (createPostgresQuotaStore)');
  const grace = nonNegativeInteger(options.expiryGraceMs ?? 5000, 'expiryGraceMs');
  const lockTimeoutMs = nonNegativeInteger(options.lockTimeoutMs ?? 2000, 'lockTimeoutMs');
  if (lockTimeoutMs > 2_147_483_647) throw configurationError('invalid_option', 'lockTimeoutMs', 'must fit in a 32-bit integer (createPostgresQuotaStore)');
  const synchronousCommit = options.synchronousCommit ?? true;
  const connection = pgConnection(pool);
  const { lane } = connection;

  let ready: Promise<void> | undefined;
  let nextCleanupAt = 0;
  let cleanup: Promise<unknown> | undefined;

  const migrateSchema = async (): Promise<void> => {
    const client = await pool.connect();
    // A connection that breaks between two statements emits 'error' with nobody listening
    // while it is checked out; without this listener that would end the process.
    client.on?.('error', noop);
    let broken: Error | undefined;
    try {
      try {
        await client.query('BEGIN');
        // The schema's lock, which the OAuth store's migration takes too: they share the schema by default.
        await client.query(migrationLockSql(schemaName));
        const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName]);
        // CREATE SCHEMA needs the CREATE privilege on the database even when the schema exists.
        if (!exists.rowCount) await client.query(sql.createSchema);
        await client.query(sql.createTable);
        await client.query(sql.createIndex);
        await client.query(sql.createRuleTable);
        await client.query(historyMigrationSql(schemaName));
        // Replacing a function needs its ownership: leave one that already has this body alone.
        const current = await client.query('SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure($1)', [sql.consumeSignature]);
        if (current.rows[0]?.prosrc !== sql.consumeBody) await client.query(sql.createConsume);
        await client.query('COMMIT');
      } catch (error) {
        // A connection that cannot even roll back is broken: destroyed, not handed to the next caller.
        await client.query('ROLLBACK').catch((rollback: unknown) => {
          broken = rollback instanceof Error ? rollback : new Error(String(rollback));
        });
        throw error;
      }
    } finally {
      client.removeListener?.('error', noop);
      client.release(broken);
    }
  };

  const migrate = (): Promise<void> => migrateOnce(migrateSchema);

  const ensureReady = (): Promise<void> => {
    if (!autoMigrate) return Promise.resolve();
    ready ??= migrate().catch((error: unknown) => {
      ready = undefined; // try again on the next call
      throw error;
    });
    return ready;
  };

  const deleteBatch = async (now: number): Promise<number> => {
    const result = await pool.query(sql.deleteExpired, [now - grace, cleanupBatchSize]);
    return result.rowCount ?? 0;
  };

  const maybeCleanup = (now: number): void => {
    if (cleanupIntervalMs === 0 || cleanup || now < nextCleanupAt) return;
    nextCleanupAt = now + cleanupIntervalMs;
    cleanup = deleteBatch(now)
      .catch(noop) // best effort; the next interval tries again
      .finally(() => {
        cleanup = undefined;
      });
  };

  /** One statement for a batch; each call gets the counts as they stood after it. */
  const send = async ({ request, calls }: Batch<ConsumeRequest, Call>): Promise<void> => {
    let release: (() => void) | undefined;
    try {
      // The local queue's bound counts the wait for the batch in flight too: calls[0] came first.
      release = await lane?.enter(QUOTA_STORE_NAME, !calls.some((call) => call.guarded?.failing), calls[0]?.since);
    } catch (error) {
      for (const call of calls) call.reject(error);
      return;
    }
    for (const call of calls) call.guarded?.sent();
    maybeCleanup(request.now);
    const { clientId, apiPath, buckets } = request;
    try {
      const result = await pool.query(sql.consume, [
        clientId,
        apiPath,
        buckets.map((b) => b.period),
        buckets.map((b) => b.start),
        buckets.map((b) => b.end),
        buckets.map((b) => b.limit),
        calls.map((call) => call.cost),
        lockTimeoutMs,
        synchronousCommit,
      ]);
      const row = result.rows[0];
      const counts = row?.counts;
      const verdicts = row?.verdicts;
      if (!Array.isArray(counts) || counts.length !== buckets.length || !Array.isArray(verdicts) || verdicts.length !== calls.length) {
        throw new StoreFailedError(STORE, 'unexpected answer from the consume function');
      }
      const base = counts.map(toNumber);
      let charged = 0;
      calls.forEach((call, i) => {
        const admitted = verdicts[i] === true;
        if (admitted) charged += call.cost;
        call.resolve({ admitted, used: base.map((count) => count + charged) });
      });
    } catch (error) {
      for (const call of calls) call.reject(error);
    } finally {
      release?.();
    }
  };
  const batches = batcher(send, STALLED_MS);

  const byPeriod = (rows: Record<string, unknown>[]): Map<string, number> =>
    new Map(rows.map((row) => [String(row.period), toNumber(row.used)]));

  return {
    kind: 'postgres',
    tableName: sql.table,
    connection,
    queuesCalls: true,
    prepare: ensureReady,
    migrate,
    history: createPostgresHistoryStore({ pool, schema: schemaName, ready: ensureReady }),
    usage: postgresUsage(pool, sql, ensureReady),
    rules: {
      inProcess: false,
      async findRules(clientId, apiPath) {
        await ensureReady();
        const own = ruleKey({ scope: 'client', clientId, apiPath });
        const { rows } = await pool.query(sql.findRules, [own, ruleKey({ scope: 'global', apiPath })]);
        const found: MatchedRules = {};
        for (const row of rows) found[row.key === own ? 'client' : 'global'] = storedRule(row.rule);
        return found;
      },
      async listRules() {
        await ensureReady();
        return storedRuleEntries((await pool.query(sql.listRules)).rows.map((row) => [String(row.key), row.rule] as const));
      },
      async saveRule(rule) {
        await ensureReady();
        await pool.query(sql.saveRule, [ruleKey(rule), JSON.stringify(rule)]);
      },
      async deleteRule(key) {
        await ensureReady();
        return ((await pool.query(sql.deleteRule, [ruleKey(key)])).rowCount ?? 0) > 0;
      },
    },
    async consume(request: ConsumeRequest, guarded?: StoreCall): Promise<ConsumeResult> {
      checkConsumeRequest(request);
      // Waiting for the migration, a batch in flight or a connection is local: no deadline runs.
      guarded?.waiting();
      await ensureReady();
      const since = performance.now();
      return new Promise((resolve, reject) => batches.add(batchKey(request), request, { cost: request.cost, resolve, reject, guarded, since }));
    },
    async peek(request: PeekRequest): Promise<number[]> {
      await ensureReady();
      const { clientId, apiPath, buckets } = request;
      const rows = await pool.query(sql.peek, [clientId, apiPath, buckets.map((b) => b.period), buckets.map((b) => b.start)]);
      const current = byPeriod(rows.rows);
      return buckets.map((bucket) => current.get(bucket.period) ?? 0);
    },
    async deleteExpired(now = Date.now()): Promise<number> {
      await ensureReady();
      let total = 0;
      // Bounded: at most 10 000 batches per call.
      for (let i = 0; i < 10_000; i++) {
        const deleted = await deleteBatch(now);
        total += deleted;
        if (deleted < cleanupBatchSize) break;
      }
      return total;
    },
    async close(): Promise<void> {
      await batches.drain();
      await cleanup;
    },
  };
}
