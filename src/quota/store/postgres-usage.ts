/**
 * The admin API's view of the PostgreSQL quota store's counters (docs/operator.md#usage): an
 * application's paths and its reset, each 10,000 rows a statement in the primary key's order,
 * every round trip told to the store guard. An application's users can make its counters
 * millions (docs/quota.md), and one statement over them all could outlast the pool's
 * query_timeout (docs/deployment.md), which pg reports as a failure of the store.
 */
import { PG_CHUNK_ROWS, type PgPoolLike } from '../../core/store-clients.js';
import { roundTripAnswered } from '../../core/store-guard.js';
import type { QuotaSql } from './postgres-sql.js';
import type { QuotaUsageStore } from './types.js';

export function postgresUsage(pool: PgPoolLike, sql: QuotaSql, ready: () => Promise<void>): QuotaUsageStore {
  return {
    async paths(clientId, now, call) {
      await ready();
      const paths: string[] = [];
      for (;;) {
        const { rows } = await pool.query(sql.usedPaths, [clientId, now, paths.at(-1) ?? null, PG_CHUNK_ROWS]);
        roundTripAnswered(call);
        for (const row of rows) paths.push(String(row.api_path));
        if (rows.length < PG_CHUNK_ROWS) return paths;
      }
    },
    async reset(clientId, apiPath, call) {
      await ready();
      // Until a chunk picks fewer than it may; each starts after the key the last one ended at.
      const paths = new Set<string>();
      let after: unknown[] = [null, null, null];
      for (;;) {
        const row = (await pool.query(sql.resetUsage, [clientId, apiPath ?? null, PG_CHUNK_ROWS, ...after])).rows[0];
        roundTripAnswered(call);
        for (const path of (row?.paths ?? []) as string[]) paths.add(path);
        if (Number(row?.picked ?? 0) < PG_CHUNK_ROWS) return paths.size;
        after = [row!.last_path, row!.last_period, row!.last_start];
      }
    },
  };
}
