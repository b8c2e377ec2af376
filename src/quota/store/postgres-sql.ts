/**
 * The SQL of the PostgreSQL quota store: the counter table, its clean-up index, and the function
 * that charges one client and path for a batch of calls in one statement.
 *
 * One row per (client_id, api_path, period, bucket_start). A guarded call is one autocommit
 * statement, `SELECT counts, verdicts FROM <table>_consume(...)`, shared by the calls of one
 * client and path with the same buckets that the store gathered into one batch (batches.ts).
 * Inside it:
 *
 *   1. INSERT ... ON CONFLICT DO NOTHING, in key order: every counter row exists afterwards. An
 *      existing row is neither written nor locked; a row another transaction is inserting is
 *      waited for.
 *   2. SELECT ... ORDER BY <key> FOR UPDATE: locks the rows in key order and reads their latest
 *      committed counts (PL/pgSQL takes a fresh snapshot per statement under READ COMMITTED, and
 *      a row lock waits for the holder's commit, then returns the newest version).
 *   3. Admits the calls in arrival order while every limited period has room for each one's
 *      cost (greedy: a call that does not fit is rejected, a later cheaper one may still fit).
 *   4. One UPDATE adds what was admitted to every row: one new row version per period per
 *      batch, whatever the batch's size; none when nothing was admitted.
 *
 * Exact: from step 2 until the commit this statement holds every row it reads and writes, so
 * the check and the charge act on counts nobody else can change. All or nothing: one UPDATE
 * charges every period or, when nothing fits, none.
 *
 * Deadlock-free: each statement touches the rows of one client and path, in one order (period,
 * bucket start) in both steps, and waits only for a statement that is further along. In step 1 it
 * waits for the inserter of a row it has not passed yet; in step 2 for a statement that locked
 * the row earlier in its own step 2 (a row another running statement inserted cannot stop it
 * there: it would have waited for that insert in step 1 already). Waits point forward in
 * (step, key) order, so they cannot close a cycle. Clean-up deletes with `FOR UPDATE SKIP
 * LOCKED`: it never waits for a lock. The migration takes only an advisory lock.
 */

import { configurationError } from '../../core/errors.js';
import { historyMigrationSql } from '../../history/postgres.js';

export const DEFAULT_SCHEMA = 'courier_platform';
export const DEFAULT_TABLE = 'courier_quota_counter';

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function identifier(value: string, what: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value) || value.length > 63) {
    throw configurationError('invalid_option', what, `must match ${IDENTIFIER} (at most 63 characters), got ${JSON.stringify(value)}`);
  }
  return `"${value}"`;
}

/** The argument types of the consume function: part of its identity (`to_regprocedure`). */
const CONSUME_ARGUMENTS = 'text, text, text[], bigint[], bigint[], bigint[], bigint[], integer, boolean';

function consumeBody(table: string): string {
  return `
DECLARE
  found_periods text[];
  found_counts bigint[];
  charged bigint := 0;
  fits boolean;
BEGIN
  IF p_lock_timeout_ms > 0 THEN
    PERFORM set_config('lock_timeout', p_lock_timeout_ms || 'ms', true);
  END IF;
  IF NOT p_synchronous_commit THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;

  INSERT INTO ${table} (client_id, api_path, period, bucket_start, bucket_end)
  SELECT p_client_id, p_api_path, b.period, b.bucket_start, b.bucket_end
  FROM unnest(p_periods, p_starts, p_ends) AS b(period, bucket_start, bucket_end)
  ORDER BY b.period, b.bucket_start
  ON CONFLICT DO NOTHING;

  SELECT array_agg(l.period), array_agg(l.used) INTO found_periods, found_counts
  FROM (
    SELECT c.period, c.used
    FROM ${table} AS c
    JOIN unnest(p_periods, p_starts) AS b(period, bucket_start) ON c.period = b.period AND c.bucket_start = b.bucket_start
    WHERE c.client_id = p_client_id AND c.api_path = p_api_path
    ORDER BY c.period, c.bucket_start
    FOR UPDATE OF c
  ) AS l;
  -- Only a clean-up that considered the bucket long over (another process's clock) deletes a
  -- row between the two statements; inserting it again here, holding locks, could deadlock.
  IF coalesce(cardinality(found_periods), 0) <> cardinality(p_periods) THEN
    RAISE EXCEPTION 'quota counter deleted while being charged: its bucket ended long ago by the clock of the process that cleaned it up';
  END IF;

  counts := '{}';
  FOR j IN 1 .. cardinality(p_periods) LOOP
    counts[j] := found_counts[array_position(found_periods, p_periods[j])];
  END LOOP;
  verdicts := '{}';
  FOR i IN 1 .. cardinality(p_costs) LOOP
    fits := true;
    FOR j IN 1 .. cardinality(p_periods) LOOP
      IF p_limits[j] > 0 AND counts[j] + charged + p_costs[i] > p_limits[j] THEN
        fits := false;
        EXIT;
      END IF;
    END LOOP;
    verdicts[i] := fits;
    IF fits THEN
      charged := charged + p_costs[i];
    END IF;
  END LOOP;

  IF charged > 0 THEN
    UPDATE ${table} AS c SET used = c.used + charged
    FROM unnest(p_periods, p_starts) AS b(period, bucket_start)
    WHERE c.client_id = p_client_id AND c.api_path = p_api_path AND c.period = b.period AND c.bucket_start = b.bucket_start;
  END IF;
END`;
}

export interface QuotaSql {
  /** `"schema"."table"`. */
  table: string;
  /** `"schema"."table_consume"`. */
  consumeFunction: string;
  /** The consume function's signature, for `to_regprocedure`. */
  consumeSignature: string;
  /** Its body as `pg_proc.prosrc` holds it: the migration replaces the function only when it differs. */
  consumeBody: string;
  createSchema: string;
  createTable: string;
  createIndex: string;
  createConsume: string;
  /**
   * One call: $1 client, $2 path, $3 periods, $4 bucket starts, $5 bucket ends, $6 limits (one
   * per period), $7 costs (one per call, in arrival order), $8 lock_timeout in ms (0: the
   * server's), $9 synchronous_commit (false: off for this statement). Answers one row: `counts`,
   * each period's count before the batch, and `verdicts`, one per call.
   */
  consume: string;
  peek: string;
  deleteExpired: string;
  /** Stored rules (the admin API's): `key` is ruleKey(), `rule` the rule as JSON. */
  createRuleTable: string;
  /** $1 the client's rule key, $2 the path's global rule key. */
  findRules: string;
  listRules: string;
  /** $1 key, $2 rule. */
  saveRule: string;
  /** $1 key. */
  deleteRule: string;
  /**
   * $1 client, $2 now (ms), $3 the path the chunk before ended at or null, $4 chunk: up to $4 of
   * the paths after $3 (the table's order) with a counter whose bucket has not ended.
   */
  usedPaths: string;
  /**
   * $1 client, $2 path or null for all, $3 chunk, $4..$6 the key (path, period, bucket start)
   * the chunk before ended at, or nulls: deletes up to $3 of those counters after that key, in
   * key order; answers how many it picked, the paths of those it deleted and the key it ended at.
   */
  resetUsage: string;
}

export function quotaSql(schemaName: string = DEFAULT_SCHEMA, tableName: string = DEFAULT_TABLE): QuotaSql {
  const schema = identifier(schemaName, 'schema');
  const table = `${schema}.${identifier(tableName, 'table')}`;
  const index = identifier(`${tableName.slice(0, 47)}_bucket_end_idx`, 'index');
  const consumeFunction = `${schema}.${identifier(`${tableName.slice(0, 55)}_consume`, 'function')}`;
  const rules = `${schema}.${identifier(`${tableName.slice(0, 58)}_rule`, 'table')}`;
  const body = consumeBody(table);
  return {
    table,
    consumeFunction,
    consumeSignature: `${consumeFunction}(${CONSUME_ARGUMENTS})`,
    consumeBody: body,
    createSchema: `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    createTable: `CREATE TABLE IF NOT EXISTS ${table} (
  client_id    text   NOT NULL,
  api_path     text   NOT NULL,
  period       text   NOT NULL,
  bucket_start bigint NOT NULL, -- UTC ms, start of the calendar period
  bucket_end   bigint NOT NULL, -- UTC ms, start of the next one: the row may be deleted from then on
  used         bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (client_id, api_path, period, bucket_start)
)`,
    createIndex: `CREATE INDEX IF NOT EXISTS ${index} ON ${table} (bucket_end)`,
    // CREATE OR REPLACE keeps the parameters and the result: changing those needs a new name.
    createConsume: `CREATE OR REPLACE FUNCTION ${consumeFunction}(
  p_client_id text, p_api_path text, p_periods text[], p_starts bigint[], p_ends bigint[],
  p_limits bigint[], p_costs bigint[], p_lock_timeout_ms integer, p_synchronous_commit boolean,
  OUT counts bigint[], OUT verdicts boolean[])
LANGUAGE plpgsql AS $consume$${body}$consume$`,
    consume: `SELECT counts, verdicts FROM ${consumeFunction}($1, $2, $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::integer, $9::boolean)`,
    peek: `
SELECT c.period, c.used FROM ${table} AS c
JOIN unnest($3::text[], $4::bigint[]) AS b(period, bucket_start)
  ON c.period = b.period AND c.bucket_start = b.bucket_start
WHERE c.client_id = $1 AND c.api_path = $2`,
    // Never waits for a lock (SKIP LOCKED), so it cannot take part in a deadlock.
    deleteExpired: `
DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table} WHERE bucket_end <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    createRuleTable: `CREATE TABLE IF NOT EXISTS ${rules} (
  key  text PRIMARY KEY,
  rule json NOT NULL
)`,
    findRules: `SELECT key, rule FROM ${rules} WHERE key = $1 OR key = $2`,
    listRules: `SELECT key, rule FROM ${rules} ORDER BY key`,
    saveRule: `INSERT INTO ${rules} (key, rule) VALUES ($1, $2::json) ON CONFLICT (key) DO UPDATE SET rule = EXCLUDED.rule`,
    deleteRule: `DELETE FROM ${rules} WHERE key = $1`,
    // In the primary key's order, after the chunk before: each chunk reads its part of the index only.
    usedPaths: `SELECT DISTINCT api_path FROM ${table} WHERE client_id = $1 AND bucket_end > $2 AND ($3::text IS NULL OR api_path > $3::text)
  ORDER BY api_path LIMIT $4`,
    // After the key the chunk before ended at, so no chunk walks the index entries of the rows
    // deleted before it; the rows picked are locked (a call charging one is waited for) and
    // deleted by their row version.
    resetUsage: `WITH picked AS (SELECT ctid, api_path, period, bucket_start FROM ${table}
  WHERE client_id = $1 AND ($2::text IS NULL OR api_path = $2)
    AND ($4::text IS NULL OR (api_path, period, bucket_start) > ($4::text, $5::text, $6::bigint))
  ORDER BY api_path, period, bucket_start LIMIT $3 FOR UPDATE),
gone AS (DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM picked)) RETURNING api_path),
last AS (SELECT api_path, period, bucket_start FROM picked ORDER BY api_path DESC, period DESC, bucket_start DESC LIMIT 1)
SELECT (SELECT count(*) FROM picked)::int AS picked, coalesce((SELECT array_agg(DISTINCT api_path) FROM gone), '{}') AS paths,
  (SELECT api_path FROM last) AS last_path, (SELECT period FROM last) AS last_period, (SELECT bucket_start FROM last) AS last_start`,
  };
}

/**
 * The DDL the store runs (without the advisory lock that serialises concurrent runs), for
 * operators who prefer their own migration tool. Idempotent, and safe on an existing counter
 * table: it only adds what is missing and (re)defines the consume function.
 */
export function quotaMigrationSql(options: { schema?: string; table?: string } = {}): string {
  const sql = quotaSql(options.schema, options.table);
  const statements = [sql.createSchema, sql.createTable, sql.createIndex, sql.createRuleTable, sql.createConsume].map((statement) => `${statement};`);
  return [...statements, historyMigrationSql(options.schema ?? DEFAULT_SCHEMA)].join('\n');
}
