/**
 * `courier-platform migrate`: the PostgreSQL schema of both stores (OAuth, and quota with its usage
 * history), for a deploy step that runs DDL so the application's stores can run with `migrate: false`
 * (docs/deployment.md). Idempotent: it only adds what is missing.
 */
import { migrationLockSql } from '../core/pg-migration.js';
import { oauthMigrationSql } from '../oauth/store/postgres.js';
import { quotaMigrationSql } from '../quota/store/postgres-sql.js';
import { parseFlags } from './args.js';
import { CliError, reasonOf } from './errors.js';

const MIGRATE_HELP = `Usage: courier-platform migrate [--schema <name>] [--database-url <url>] [--print]

Creates (or completes) the tables of the PostgreSQL OAuth store and quota store (its usage
history included) in one transaction, against DATABASE_URL (or --database-url).

  --schema <name>        the schema of both stores (default courier_platform)
  --database-url <url>   instead of the DATABASE_URL environment variable
  --print                print the SQL instead of running it (for your own migration tool)
`;

/**
 * How long the migration waits for a lock another session holds (a long transaction or query on
 * the tables, a pg_dump, an application's own migration of the schema). \`ALTER TABLE\` waits for an
 * exclusive lock, and every query of the application on that table queues behind the waiting
 * migration: it gives up instead, changes nothing, and says so.
 */
export const MIGRATE_LOCK_TIMEOUT_SECONDS = 10;

/** Both stores' DDL, each store's part validated as the stores validate their options. */
export function migrationSql(schema: string | undefined): string {
  try {
    return `-- courier-platform: OAuth store\n${oauthMigrationSql({ schema })}\n\n-- courier-platform: quota store\n${quotaMigrationSql({ schema })}\n`;
  } catch (error) {
    throw new CliError(`migrate: --schema ${reasonOf(error).replace(/^.*?schema:?\s*/i, '')}`, 2);
  }
}

export async function migrateCommand(args: readonly string[], io: { stdout: NodeJS.WriteStream; env: NodeJS.ProcessEnv }): Promise<void> {
  const { values } = parseFlags('migrate', args, {
    schema: { type: 'string' },
    'database-url': { type: 'string' },
    print: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(MIGRATE_HELP);
    return;
  }
  const schema = (values.schema as string | undefined) ?? 'courier_platform';
  const sql = migrationSql(schema);
  if (values.print) {
    io.stdout.write(sql);
    return;
  }
  const url = (values['database-url'] as string | undefined) ?? io.env.DATABASE_URL;
  if (!url) throw new CliError('migrate: set DATABASE_URL (or pass --database-url), or use --print for the SQL', 2);

  let pg: typeof import('pg');
  try {
    pg = await import('pg');
  } catch {
    throw new CliError('migrate: the `pg` package is not installed (npm install pg)');
  }
  const Client = pg.default?.Client ?? pg.Client;
  let client: InstanceType<typeof Client>;
  try {
    client = new Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  } catch (error) {
    // pg's reason names the part it cannot read, never the password.
    throw new CliError(`migrate: the database URL is not one pg can read: ${reasonOf(error)}`, 2);
  }
  client.on('error', () => {}); // a dropped connection surfaces as the query's own error
  try {
    await client.connect();
  } catch (error) {
    throw new CliError(`migrate: could not connect to the database: ${reasonOf(error)}`);
  }
  try {
    // One query string is one implicit transaction: all of it or nothing. The stores' migration
    // lock of the schema keeps an application starting meanwhile from creating it at the same time.
    // lock_timeout bounds every lock wait of the transaction, that migration lock included.
    await client.query(`BEGIN;\nSET LOCAL lock_timeout = '${MIGRATE_LOCK_TIMEOUT_SECONDS}s';\n${migrationLockSql(schema)};\n${sql}\nCOMMIT;`);
    io.stdout.write(`migrate: the OAuth and quota tables are in schema ${schema}\n`);
  } catch (error) {
    if ((error as { code?: unknown }).code === '55P03') {
      throw new CliError(
        `migrate: another session held a lock on schema ${schema} or its tables for ${MIGRATE_LOCK_TIMEOUT_SECONDS} s ` +
          '(a long transaction or query on them, a dump, a migration under way); nothing was changed: run it again once that has ended',
      );
    }
    throw new CliError(`migrate: ${reasonOf(error)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
