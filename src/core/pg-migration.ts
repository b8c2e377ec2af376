/**
 * What every PostgreSQL migration of the platform shares (the OAuth store's, the quota store's
 * with its usage history, `courier-platform migrate`): one lock per schema, and one retry.
 *
 * `CREATE SCHEMA IF NOT EXISTS` and `CREATE TABLE IF NOT EXISTS` are not atomic in PostgreSQL:
 * two sessions that both find the object missing both create it, and the later one fails on the
 * catalog's unique index. The stores share their schema by default and start together, so each
 * migration first takes the same advisory lock, named after the schema alone: the migrations of
 * one schema then run one after another, and the later one finds what the earlier one made
 * (docs/stores.md#postgresql).
 */

/**
 * The statement that takes the schema's migration lock until the transaction ends. The schema
 * name is a literal, so the lock also serialises migrations sent as one multi-statement string.
 */
export function migrationLockSql(schema: string): string {
  const key = `courier-platform:migration:${schema}`.replaceAll("'", "''");
  return `SELECT pg_advisory_xact_lock(hashtext('${key}'))`;
}

/** The catalog indexes a concurrent CREATE ... IF NOT EXISTS of the same schema, table, index or type collides on. */
const CREATED_TWICE = new Set(['pg_namespace_nspname_index', 'pg_class_relname_nsp_index', 'pg_type_typname_nsp_index']);

/** The migration lost a race to create an object to DDL that did not take the lock (an operator's tool, say). */
export function lostCreateRace(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && typeof constraint === 'string' && CREATED_TWICE.has(constraint);
}

/**
 * Runs an idempotent migration, and once more when it lost such a race: the winner has committed
 * by then, so the second run finds its objects and leaves them alone.
 */
export async function migrateOnce(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!lostCreateRace(error)) throw error;
    await run();
  }
}
