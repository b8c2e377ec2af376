/**
 * Quota counters in PostgreSQL, shared by every process of the platform.
 *
 * One row per (client_id, api_path, period, bucket_start); one transaction per guarded call:
 *
 *   BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout ...; SET LOCAL idle_in_transaction_session_timeout ...
 *   INSERT ... SELECT ... ORDER BY period, bucket_start
 *     ON CONFLICT (pk) DO UPDATE SET used = c.used RETURNING period, used   -- lock + read
 *   -- the check happens here, in the application, against values nobody else can change now
 *   UPDATE ... SET used = used + $cost ... RETURNING period, used            -- only if admitted
 *   COMMIT                                                                  -- ROLLBACK if not
 *
 * Why this is exact under READ COMMITTED: `INSERT ... ON CONFLICT DO UPDATE` either inserts the
 * row or locks the latest committed version of the existing one (waiting for a concurrent
 * transaction holding it to finish first), and RETURNING reports that version. So once the
 * statement returns, this transaction holds a row lock on every period's counter and knows its
 * true value; no other transaction can change any of them before COMMIT. The check and the
 * increment therefore act on the truth: no over-admission, and a rejection writes nothing
 * (the no-op update and any freshly inserted zero row are rolled back).
 *
 * Why it cannot deadlock: all counter-row locks of a call are taken by that one INSERT, which
 * consumes its input in ORDER BY order, i.e. in primary-key order (client and path are fixed
 * within a call). Every transaction therefore acquires its locks in the same global order; the
 * UPDATE touches only rows already locked. Ordered acquisition leaves no cycle to deadlock on.
 * Clean-up uses `FOR UPDATE SKIP LOCKED`, so it never waits on a lock either; the migration
 * takes only an advisory lock.
 */
import type { PgClientLike, PgPoolLike } from '../../core/store-clients.js';
import { checkConsumeRequest, type ConsumeRequest, type ConsumeResult, type PeekRequest, type QuotaStore } from './types.js';

const DEFAULT_SCHEMA = 'courier_platform';

export interface PostgresQuotaStoreOptions {
  /**
   * A `pg.Pool`, ideally with a short `connectionTimeoutMillis` so calls fail fast while the
   * database is away. Give the pool an `'error'` listener: pg emits one for an idle connection
   * that breaks, and an unhandled `'error'` event ends a Node process.
   */
  pool: PgPoolLike;
  /** Schema of the counter table; created when missing. Default `courier_platform` (the OAuth store's too). Lower-case identifier. */
  schema?: string;
  /** Default `courier_quota_counter`. Lower-case identifier. */
  table?: string;
  /** Run the (idempotent) migration on first use. Default true; false when you run `migrate()` or `migrationSql()` yourself. */
  migrate?: boolean;
  /** How often (by the service clock) a consume also deletes one batch of expired rows, in ms. Default 60 000; 0 = never. */
  cleanupIntervalMs?: number;
  /** Rows deleted per clean-up batch. Default 1000. */
  cleanupBatchSize?: number;
  /**
   * `false` runs each consume with `SET LOCAL synchronous_commit = off`: the commit does not
   * wait for the WAL flush, which roughly halves the guard's latency; a database crash may then
   * forget the last few hundred milliseconds of counts (never over-count). Default true: the
   * server's own setting applies.
   */
  synchronousCommit?: boolean;
  /**
   * `lock_timeout` of a consume, in ms (default 2000; 0 = the server's). A call waiting longer
   * for a counter row fails (and the guard follows `onStoreError`) instead of piling up.
   */
  lockTimeoutMs?: number;
  /**
   * `idle_in_transaction_session_timeout` of a consume, in ms (default 5000; 0 = the server's).
   * If an application server vanishes mid-transaction without closing its connection, the
   * database ends that session and frees its row locks after this long, instead of after TCP
   * keepalive gives up (hours).
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * A row is deleted only this long after its bucket's end (ms, default 5000), so an
   * application server whose clock runs a little behind still finds the count.
   */
  expiryGraceMs?: number;
}

export interface PostgresQuotaStore extends QuotaStore {
  readonly kind: 'postgres';
  /** `"schema"."table"`, quoted. */
  readonly tableName: string;
  /** Creates the schema, table and index if missing. Idempotent; safe to run from many processes at once. */
  migrate(): Promise<void>;
  /** Deletes rows whose bucket ended more than `expiryGraceMs` before `now` (default: the current time); returns how many. */
  deleteExpired(now?: number): Promise<number>;
  /** Waits for a clean-up in flight. Never ends the pool. */
  close(): Promise<void>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function identifier(value: string, what: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value) || value.length > 63) {
    throw new TypeError(`postgres quota store: ${what} must match ${IDENTIFIER} (at most 63 characters), got ${JSON.stringify(value)}`);
  }
  return `"${value}"`;
}

function migrationStatements(schemaName: string, tableName: string): string[] {
  const schema = identifier(schemaName, 'schema');
  const table = identifier(tableName, 'table');
  const index = identifier(`${tableName.slice(0, 47)}_bucket_end_idx`, 'index');
  return [
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${schema}.${table} (
  client_id    text   NOT NULL,
  api_path     text   NOT NULL,
  period       text   NOT NULL,
  bucket_start bigint NOT NULL, -- UTC ms, start of the calendar period
  bucket_end   bigint NOT NULL, -- UTC ms, start of the next one: the row may be deleted from then on
  used         bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (client_id, api_path, period, bucket_start)
)`,
    `CREATE INDEX IF NOT EXISTS ${index} ON ${schema}.${table} (bucket_end)`,
  ];
}

/**
 * The DDL the store runs (without the advisory lock that serialises concurrent runs), for
 * operators who prefer their own migration tool. Idempotent.
 */
export function quotaMigrationSql(options: { schema?: string; table?: string } = {}): string {
  return migrationStatements(options.schema ?? DEFAULT_SCHEMA, options.table ?? 'courier_quota_counter')
    .map((statement) => `${statement};`)
    .join('\n');
}

function toNumber(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) throw new Error(`postgres quota store: unexpected counter value ${String(value)}`);
  return n;
}

const noop = (): void => {};

/**
 * An error the server answered with (a SQLSTATE such as 55P03 lock_not_available) leaves the
 * connection usable; anything else (network, protocol, 08xxx connection exceptions, 57P0x
 * shutdowns) may have broken it.
 */
function isServerError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57P');
}

/**
 * @example
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 1000 });
 * pool.on('error', () => {}); // idle connections that break are replaced; see the option's note
 * const service = createQuotaService({ store: createPostgresQuotaStore({ pool }) });
 */
export function createPostgresQuotaStore(options: PostgresQuotaStoreOptions): PostgresQuotaStore {
  const pool = options?.pool;
  if (!pool || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
    throw new TypeError('postgres quota store: pool must be a pg.Pool (query and connect)');
  }
  const schemaName = options.schema ?? DEFAULT_SCHEMA;
  const tableBase = options.table ?? 'courier_quota_counter';
  const table = `${identifier(schemaName, 'schema')}.${identifier(tableBase, 'table')}`;
  const [createSchema, ...createTable] = migrationStatements(schemaName, tableBase) as [string, ...string[]];
  const autoMigrate = options.migrate ?? true;
  const cleanupIntervalMs = options.cleanupIntervalMs ?? 60_000;
  const cleanupBatchSize = options.cleanupBatchSize ?? 1000;
  const grace = options.expiryGraceMs ?? 5000;
  if (!Number.isSafeInteger(grace) || grace < 0) throw new TypeError('postgres quota store: expiryGraceMs must be a non-negative integer');
  if (!Number.isSafeInteger(cleanupIntervalMs) || cleanupIntervalMs < 0) throw new TypeError('postgres quota store: cleanupIntervalMs must be a non-negative integer');
  if (!Number.isSafeInteger(cleanupBatchSize) || cleanupBatchSize < 1) throw new TypeError('postgres quota store: cleanupBatchSize must be a positive integer');

  const lockTimeoutMs = options.lockTimeoutMs ?? 2000;
  const idleTimeoutMs = options.idleInTransactionTimeoutMs ?? 5000;
  for (const [name, value] of [['lockTimeoutMs', lockTimeoutMs], ['idleInTransactionTimeoutMs', idleTimeoutMs]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`postgres quota store: ${name} must be a non-negative integer`);
  }
  // One simple-protocol round trip for all of these (no parameters; the numbers are checked integers).
  const BEGIN = [
    'BEGIN ISOLATION LEVEL READ COMMITTED',
    lockTimeoutMs > 0 ? `SET LOCAL lock_timeout = ${lockTimeoutMs}` : undefined,
    idleTimeoutMs > 0 ? `SET LOCAL idle_in_transaction_session_timeout = ${idleTimeoutMs}` : undefined,
    options.synchronousCommit === false ? 'SET LOCAL synchronous_commit = off' : undefined,
  ]
    .filter((statement) => statement !== undefined)
    .join('; ');

  const LOCK_AND_READ = `
INSERT INTO ${table} AS c (client_id, api_path, period, bucket_start, bucket_end, used)
SELECT $1, $2, b.period, b.bucket_start, b.bucket_end, 0
FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS b(period, bucket_start, bucket_end)
ORDER BY b.period, b.bucket_start
ON CONFLICT (client_id, api_path, period, bucket_start) DO UPDATE SET used = c.used
RETURNING c.period, c.used`;

  const CHARGE = `
UPDATE ${table} AS c SET used = c.used + $3
FROM unnest($4::text[], $5::bigint[]) AS b(period, bucket_start)
WHERE c.client_id = $1 AND c.api_path = $2 AND c.period = b.period AND c.bucket_start = b.bucket_start
RETURNING c.period, c.used`;

  const PEEK = `
SELECT c.period, c.used FROM ${table} AS c
JOIN unnest($3::text[], $4::bigint[]) AS b(period, bucket_start)
  ON c.period = b.period AND c.bucket_start = b.bucket_start
WHERE c.client_id = $1 AND c.api_path = $2`;

  // Never waits for a lock (SKIP LOCKED), so it cannot take part in a deadlock.
  const DELETE_EXPIRED = `
DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table} WHERE bucket_end <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED))`;

  let ready: Promise<void> | undefined;
  let nextCleanupAt = 0;
  let cleanup: Promise<unknown> | undefined;

  const withClient = async <T>(work: (client: PgClientLike) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    // A connection that breaks between two statements emits 'error' with nobody listening
    // while it is checked out; without this listener that would end the process.
    client.on?.('error', noop);
    let failure: Error | undefined;
    try {
      return await work(client);
    } catch (error) {
      if (!isServerError(error)) failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.removeListener?.('error', noop);
      // A broken connection is destroyed, not handed to the next caller.
      client.release(failure);
    }
  };

  const migrate = (): Promise<void> =>
    withClient(async (client) => {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`courier-platform:quota:${schemaName}.${tableBase}`]);
        const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName]);
        // CREATE SCHEMA needs the CREATE privilege on the database even when the schema exists.
        if (!exists.rowCount) await client.query(createSchema);
        for (const statement of createTable) await client.query(statement);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(noop);
        throw error;
      }
    });

  const ensureReady = (): Promise<void> => {
    if (!autoMigrate) return Promise.resolve();
    ready ??= migrate().catch((error: unknown) => {
      ready = undefined; // try again on the next call
      throw error;
    });
    return ready;
  };

  const deleteBatch = async (now: number): Promise<number> => {
    const result = await pool.query(DELETE_EXPIRED, [now - grace, cleanupBatchSize]);
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

  const byPeriod = (rows: Record<string, unknown>[]): Map<string, number> =>
    new Map(rows.map((row) => [String(row.period), toNumber(row.used)]));

  return {
    kind: 'postgres',
    tableName: table,
    migrate,
    async consume(request: ConsumeRequest): Promise<ConsumeResult> {
      checkConsumeRequest(request);
      await ensureReady();
      const { clientId, apiPath, cost, buckets, now } = request;
      const periods = buckets.map((b) => b.period);
      const starts = buckets.map((b) => b.start);
      const result = await withClient(async (client) => {
        await client.query(BEGIN);
        try {
          const locked = await client.query(LOCK_AND_READ, [clientId, apiPath, periods, starts, buckets.map((b) => b.end)]);
          const current = byPeriod(locked.rows);
          const used = periods.map((period) => current.get(period) ?? 0);
          const admitted = buckets.every((bucket, i) => bucket.limit === 0 || (used[i] as number) + cost <= bucket.limit);
          if (!admitted) {
            await client.query('ROLLBACK');
            return { admitted, used };
          }
          const charged = byPeriod((await client.query(CHARGE, [clientId, apiPath, cost, periods, starts])).rows);
          await client.query('COMMIT');
          return { admitted, used: periods.map((period) => charged.get(period) ?? 0) };
        } catch (error) {
          await client.query('ROLLBACK').catch(noop);
          throw error;
        }
      });
      maybeCleanup(now);
      return result;
    },
    async peek(request: PeekRequest): Promise<number[]> {
      await ensureReady();
      const { clientId, apiPath, buckets } = request;
      const rows = await pool.query(PEEK, [clientId, apiPath, buckets.map((b) => b.period), buckets.map((b) => b.start)]);
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
      await cleanup;
    },
  };
}
