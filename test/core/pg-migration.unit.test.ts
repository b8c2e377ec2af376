/**
 * A migration that loses a race to create the schema (or a table) to DDL outside the platform's
 * migration lock runs once more and finds the winner's objects; any other failure stays a
 * failure (docs/stores.md#postgresql). The stores are driven through pool doubles that answer
 * PostgreSQL's unique violation on the catalog once.
 */
import { describe, expect, it } from 'vitest';
import type { PgClientLike, PgPoolLike, PgQueryResultLike } from '../../src/core/store-clients.js';
import { lostCreateRace, migrateOnce, migrationLockSql } from '../../src/core/pg-migration.js';
import { createPostgresOAuthStore } from '../../src/oauth/store/index.js';
import { createPostgresQuotaStore } from '../../src/quota/index.js';

/** What pg answers a CREATE ... IF NOT EXISTS that another session's commit beat. */
const createdTwice = (constraint = 'pg_namespace_nspname_index') =>
  Object.assign(new Error(`duplicate key value violates unique constraint "${constraint}"`), { code: '23505', constraint });

const empty: PgQueryResultLike = { rows: [], rowCount: 0 };

/** A pool whose statements matching `failing` throw `error` the first `times` times; records every statement. */
function poolDouble(failing: RegExp, error: Error, times = 1) {
  const sent: string[] = [];
  let left = times;
  const query = async (text: string): Promise<PgQueryResultLike> => {
    sent.push(text);
    if (failing.test(text) && left > 0) {
      left -= 1;
      throw error;
    }
    return empty;
  };
  const client: PgClientLike = { query, release: () => {} };
  const pool: PgPoolLike = { query, connect: async () => client };
  return { pool, sent };
}

describe('migrateOnce', () => {
  it('runs again after a lost race on the schema, a table or a type, and only then', async () => {
    for (const constraint of ['pg_namespace_nspname_index', 'pg_class_relname_nsp_index', 'pg_type_typname_nsp_index']) {
      let runs = 0;
      await migrateOnce(async () => {
        runs += 1;
        if (runs === 1) throw createdTwice(constraint);
      });
      expect(runs, constraint).toBe(2);
    }
  });

  it('passes any other failure on at once, and a second lost race too', async () => {
    let runs = 0;
    const refused = Object.assign(new Error('permission denied for database test'), { code: '42501' });
    await expect(migrateOnce(async () => {
      runs += 1;
      throw refused;
    })).rejects.toBe(refused);
    expect(runs).toBe(1);

    // A unique violation on a table of the platform is not a race of CREATE ... IF NOT EXISTS.
    expect(lostCreateRace(Object.assign(new Error('duplicate'), { code: '23505', constraint: 'oauth_clients_pkey' }))).toBe(false);

    runs = 0;
    await expect(migrateOnce(async () => {
      runs += 1;
      throw createdTwice();
    })).rejects.toMatchObject({ code: '23505' });
    expect(runs).toBe(2);
  });

  it('names one lock per schema, whichever store migrates', () => {
    expect(migrationLockSql('courier_platform')).toBe(migrationLockSql('courier_platform'));
    expect(migrationLockSql('courier_platform')).not.toBe(migrationLockSql('other'));
    expect(migrationLockSql("o'brien")).toContain("o''brien");
  });
});

describe('the PostgreSQL stores, losing the race to create their schema', () => {
  it('the OAuth store takes the schema lock, retries, and answers its first call', async () => {
    const { pool, sent } = poolDouble(/CREATE SCHEMA/, createdTwice());
    const store = createPostgresOAuthStore({ pool, schema: 'shared' });
    await expect(store.getClient('a')).resolves.toBeUndefined();
    const migrations = sent.filter((text) => text.includes('CREATE SCHEMA'));
    expect(migrations).toHaveLength(2);
    expect(migrations[0]!.startsWith(`${migrationLockSql('shared')};`)).toBe(true);
  });

  it('the quota store takes the same lock, retries, and is ready', async () => {
    const { pool, sent } = poolDouble(/CREATE SCHEMA/, createdTwice());
    const store = createPostgresQuotaStore({ pool, schema: 'shared' });
    await expect(store.prepare()).resolves.toBeUndefined();
    expect(sent.filter((text) => text.includes('CREATE SCHEMA'))).toHaveLength(2);
    expect(sent.filter((text) => text === migrationLockSql('shared'))).toHaveLength(2);
  });

  it('a failure other than the race is the first call\'s error', async () => {
    const refused = Object.assign(new Error('permission denied for database test'), { code: '42501' });
    const { pool } = poolDouble(/CREATE SCHEMA/, refused);
    await expect(createPostgresOAuthStore({ pool, schema: 'shared' }).getClient('a')).rejects.toBe(refused);
    await expect(createPostgresQuotaStore({ pool: poolDouble(/CREATE SCHEMA/, refused).pool, schema: 'shared' }).prepare()).rejects.toBe(refused);
  });
});
