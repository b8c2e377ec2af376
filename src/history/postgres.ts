/**
 * Usage history in PostgreSQL, shared by every process on the database.
 *
 * One row per (client_id, step, bucket_start, api_path). A flush is ONE statement: INSERT ...
 * SELECT FROM unnest(arrays) ... ON CONFLICT DO UPDATE adding the counts, rows in key order so
 * two processes flushing at once lock them in the same order and cannot deadlock. Old rows go
 * with one DELETE, at most once an hour per process, after a flush.
 */
import type { PgPoolLike } from '../core/store-clients.js';
import { roundTripAnswered } from '../core/store-guard.js';
import { keptFrom, pointsOf, stepMs, type HistoryPoint, type HistoryStep, type UsageHistoryStore } from './types.js';

export const DEFAULT_HISTORY_TABLE = 'courier_usage_history';
/** Buckets one statement of a read covers: a day of hours. */
const READ_SLICE = 24;

export interface PostgresHistoryStoreOptions {
  pool: PgPoolLike;
  /** The quota store's schema (checked there). */
  schema: string;
  /** The quota store's migration on first use, which creates this table too. */
  ready(): Promise<void>;
}

/** The table's DDL, idempotent: part of the quota store's migration (`quotaMigrationSql`, `courier-platform migrate`). */
export function historyMigrationSql(schema: string): string {
  const table = `"${schema}"."${DEFAULT_HISTORY_TABLE}"`;
  return `CREATE TABLE IF NOT EXISTS ${table} (
  client_id text NOT NULL,
  step text NOT NULL CHECK (step IN ('hour', 'day')),
  bucket_start bigint NOT NULL,
  api_path text NOT NULL,
  admitted bigint NOT NULL DEFAULT 0,
  rejected bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (client_id, step, bucket_start, api_path)
);
CREATE INDEX IF NOT EXISTS "${DEFAULT_HISTORY_TABLE}_age" ON ${table} (step, bucket_start);`;
}

const number = (value: unknown): number => Number(value);

export function createPostgresHistoryStore({ pool, schema, ready }: PostgresHistoryStoreOptions): UsageHistoryStore {
  const table = `"${schema}"."${DEFAULT_HISTORY_TABLE}"`;
  const upsert = `INSERT INTO ${table} AS h (client_id, step, bucket_start, api_path, admitted, rejected)
SELECT c, s, b, p, a, r
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[]) WITH ORDINALITY AS u(c, s, b, p, a, r, n)
ORDER BY n
ON CONFLICT (client_id, step, bucket_start, api_path)
DO UPDATE SET admitted = h.admitted + EXCLUDED.admitted, rejected = h.rejected + EXCLUDED.rejected`;
  const prune = `DELETE FROM ${table} WHERE (step = 'hour' AND bucket_start < $1) OR (step = 'day' AND bucket_start < $2)`;
  const select = `SELECT api_path, bucket_start, admitted, rejected FROM ${table}
WHERE client_id = $1 AND step = $2 AND bucket_start >= $3 AND bucket_start < $4 AND ($5::text IS NULL OR api_path = $5)`;

  let prunedAt = -1;

  return {
    kind: 'postgres',
    async add(counts, now, retention) {
      await ready();
      const hourFrom = keptFrom('hour', now, retention);
      const dayFrom = keptFrom('day', now, retention);
      // Every process upserts in one order (any fixed one): two flushes never wait on each other in a cycle.
      const rows = pointsOf(counts)
        .filter((point) => point.start >= (point.step === 'hour' ? hourFrom : dayFrom))
        .map((point) => ({ point, key: `${point.clientId}\u0000${point.step}\u0000${point.start}\u0000${point.apiPath}` }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map(({ point }) => point);
      if (rows.length > 0) {
        await pool.query(upsert, [
          rows.map((row) => row.clientId),
          rows.map((row) => row.step),
          rows.map((row) => row.start),
          rows.map((row) => row.apiPath),
          rows.map((row) => row.admitted),
          rows.map((row) => row.rejected),
        ]);
      }
      if (hourFrom !== prunedAt) {
        await pool.query(prune, [hourFrom, dayFrom]);
        prunedAt = hourFrom;
      }
    },
    async read({ clientId, apiPath, step, from, to }, call, onPoints) {
      await ready();
      // READ_SLICE buckets a statement: an application's users can make its endpoints a thousand
      // an hour (docs/operator.md#usage-history), and 41 days of them in one statement (a million
      // rows) could outlast the pool's query_timeout (docs/deployment.md), which counts the time
      // this process takes to read the rows, when a few reads run at once. Each statement's rows
      // are folded into the answer before the next is sent, and between statements the process
      // serves other requests.
      for (let start = from; start < to; start += READ_SLICE * stepMs(step)) {
        const end = Math.min(to, start + READ_SLICE * stepMs(step));
        const { rows } = await pool.query(select, [clientId, step satisfies HistoryStep, start, end, apiPath ?? null]);
        roundTripAnswered(call);
        onPoints(rows.map((row): HistoryPoint => ({ apiPath: String(row.api_path), step, start: number(row.bucket_start), admitted: number(row.admitted), rejected: number(row.rejected) })));
      }
    },
  };
}
