/**
 * The OAuth store on PostgreSQL, for several processes acting as one platform.
 *
 * Tables (in one schema, default `courier_platform`):
 *
 *   oauth_clients   (id pk, record json)
 *   oauth_grants    (grant_id pk, client_id, sub, the grant record's columns, expires_at)
 *                                                      indexes (client_id, sub) and (expires_at)
 *   oauth_consents  (sub, client_id, scopes text[])                          pk (sub, client_id)
 *   oauth_used_once (id pk, expires_at)                  single-use markers (consent transactions)
 *   oauth_failure_windows (key pk, ids text[], window_end)
 *                                      brute-force windows: the ids of the attempts counted, until window_end (ms)
 *   oauth_given_back (key, id, until)    pk (key, id), index (until)
 *                                      the ids given back (counted or not), each until a window after its
 *                                      own give-back (ms); read by oauth_given_back_at(key, id, at)
 *   oauth_known_callers (client, caller, until)   pk (client, caller), index (until)
 *                                      the callers that proved a client's secret (hashes), each until its
 *                                      mark ends (ms); the most recent ones per client (known-callers.ts)
 *
 * One row per grant, bounded whatever the number of refreshes (see types.ts): the code record
 * and the code's hash, expiry and consumed flag; the generation; the current refresh token
 * (hash, expiry, installed at, pending), the previous one (hash, expiry, rotated out at) and the
 * earlier ones before it (jsonb `[[hash, expiry ms], ...]`, newest first, at most
 * EARLIER_REFRESH_TOKENS - 1, unexpired); the current and the previous access token (json: hash,
 * scope, expiresAt). Every operation on a grant is one statement on its row: row locking
 * serialises concurrent ones, and a statement that fails changes nothing.
 *
 * A refresh is one autocommitted statement, not a transaction committed by the caller in time:
 * that would cost two more round trips, and a commit that lands after its caller gave up is
 * harmless anyway. Its answer was never written, so the rotation stays pending and the client's
 * retry repeats it (types.ts); a statement that arrives after a later generation was installed
 * is refused by its time stamp, when it was stamped at least the platform's store deadline
 * before that generation. The stamp is taken as the statement leaves, before it waits for the
 * row's lock, so of two statements presenting one token at once the one that gets the lock
 * second may carry the earlier stamp: stamped less than that deadline before, it is a concurrent
 * one, judged as if it came after (a retry of the pending rotation, or a reuse).
 *
 * Records are `json`, not `jsonb`: json keeps the exact text (key order, numbers, any string
 * jsonb would refuse such as \u0000) and costs nothing to write.
 *
 * Time always comes from the injected clock as a parameter, never SQL `now()`, so expiry follows
 * the same clock as the other stores (and tests can move it).
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { migrateOnce, migrationLockSql } from '../../core/pg-migration.js';
import { pgConnection, type StoreConnection } from '../../core/store-connection.js';
import { PG_CHUNK_ROWS, type PgQueryable } from '../../core/store-clients.js';
import { storedObject } from '../../core/stored-json.js';
import {
  accessView,
  checkGrantId,
  clientGrantRecord,
  EARLIER_REFRESH_TOKENS,
  grantIdOf,
  lateWriteMsOf,
  refreshView,
  storedAccess,
  type StoredAccessToken,
  type StoredGrant,
} from './grant-record.js';
import { postgresClients } from './postgres-clients.js';
import { failureWindowStatements, statements } from './postgres-sql.js';
import type { AuthorizationCodeRecord, NewTokens, OAuthStore, TokenRef } from './types.js';

export interface PostgresOAuthStoreOptions {
  /** A `pg.Pool` (or anything `PgQueryable`). The store never ends it. */
  pool: PgQueryable;
  /** Schema holding the tables (default `courier_platform`); lower case letters, digits and `_`. */
  schema?: string;
  /** Time source for expiry (default `Date.now`). */
  now?: Clock;
  /** Create the schema and tables on first use (default true). Turn off when migrations run elsewhere. */
  migrate?: boolean;
}

/** What the brute-force limits need to count on this store (failure-windows.ts). */
export interface PostgresRateLimitStore {
  readonly kind: 'postgres';
  /** The windows' statements, in the store's schema. */
  readonly statements: ReturnType<typeof failureWindowStatements>;
  /** Runs a statement as the store runs its own: once its migration (if any) made the table. */
  query<T>(text: string, values: unknown[]): Promise<{ rows: T[] }>;
  /** The store's clock: windows end by the same time as its tokens. */
  now(): number;
  /** After a write: the store deletes ended rows, its own and the windows', now and then. */
  written(): void;
}

export interface PostgresOAuthStore extends OAuthStore {
  /** Names the store in the log, the metrics and errors: `OAuth store (postgres)`. */
  readonly kind: 'postgres';
  /** The pool as `ready()` warms it and the store guard queues calls for it (docs/stores.md#the-local-queue). */
  readonly connection: StoreConnection;
  /** Lets the client-authentication limit and `createLoginThrottle({ store })` count in this schema. */
  readonly rateLimitStore: PostgresRateLimitStore;
  /** Creates the schema, tables and indexes when missing. Idempotent, and safe to run concurrently. */
  migrate(): Promise<void>;
  /**
   * Deletes expired rows: grants, used-once markers, ended or emptied brute-force windows and
   * attempts given back once forgotten; answers how many grants went. The store also runs it by itself
   * at most once a minute (of the injected clock) after a new grant or a brute-force window write.
   */
  deleteExpired(): Promise<number>;
}

const SWEEP_INTERVAL_MS = 60_000;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

/** The name is spliced into SQL (identifiers cannot be parameters): only plain names pass. */
function quotedSchema(schema: unknown): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema) || schema.length > 63) {
    throw configurationError('invalid_option', 'schema', `must match ${SCHEMA_NAME} (at most 63 characters)`);
  }
  return `"${schema}"`;
}

/**
 * The DDL `migrate()` runs (without its advisory lock), for operators with a migration tool of
 * their own: idempotent, and it only adds what is missing.
 */
export function oauthMigrationSql(options: { schema?: string } = {}): string {
  return statements(quotedSchema(options.schema ?? 'courier_platform')).migration.trim();
}

interface RecordRow {
  record: unknown;
}

/**
 * @example
 * import pg from 'pg';
 * const store = createPostgresOAuthStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 */
export function createPostgresOAuthStore(options: PostgresOAuthStoreOptions): PostgresOAuthStore {
  const { pool } = options;
  const schema = options.schema ?? 'courier_platform';
  const now = options.now ?? systemClock;
  if (!pool || typeof pool.query !== 'function') {
    throw configurationError('invalid_option', 'pool', 'must be a pg.Pool (or have query(text, values))');
  }
  const sql = statements(quotedSchema(schema));

  const autoMigrate = options.migrate !== false;
  let ready: Promise<void> | undefined;
  let lastSweep = now();

  async function migrate(): Promise<void> {
    // One query string = one connection and one implicit transaction, so the schema's migration
    // lock (which the quota store's migration takes too) is held until every statement is done,
    // and a concurrent migration waits instead of failing on a half-created schema.
    await migrateOnce(() => pool.query(`${migrationLockSql(schema)};\n${sql.migration}`).then(() => undefined));
  }

  /** Starts a migration that every query waits for (and that stays done once it succeeded). */
  function startMigration(): Promise<void> {
    const run = migrate();
    ready = run;
    // A failed attempt is retried by the next call rather than remembered forever.
    run.catch(() => {
      if (ready === run) ready = undefined;
    });
    return run;
  }

  /** Queries wait for a running migration; the first one starts it unless `migrate: false`. */
  function ensureReady(): Promise<void> {
    return ready ?? (autoMigrate ? startMigration() : Promise.resolve());
  }

  async function query<T>(text: string, values: unknown[]): Promise<{ rows: T[]; rowCount: number | null }> {
    await ensureReady();
    const result = await pool.query(text, values);
    return { rows: result.rows as T[], rowCount: result.rowCount };
  }

  /**
   * Up to PG_CHUNK_ROWS rows of each table a statement, until one deletes fewer: the clean-up takes
   * a connection outside the local queue (docs/stores.md#the-local-queue), so it holds one for
   * about 50 ms at a time however much expired since the last, rather than seconds at once.
   */
  async function deleteExpired(): Promise<number> {
    const at = now();
    let deleted = 0;
    for (;;) {
      const { rows } = await query<{ deleted: number; most: number }>(sql.deleteExpired, [new Date(at), at, PG_CHUNK_ROWS]);
      deleted += rows[0]?.deleted ?? 0;
      if ((rows[0]?.most ?? 0) < PG_CHUNK_ROWS) return deleted;
    }
  }

  /** Fire-and-forget clean-up after writes: a statement at a time, and a failure only delays it. */
  function maybeSweep(): void {
    const at = now();
    if (at - lastSweep < SWEEP_INTERVAL_MS) return;
    lastSweep = at;
    deleteExpired().catch(() => undefined);
  }

  /** The first issuance, or a refresh presenting a refresh token: one statement either way. */
  async function install(text: string, tokens: NewTokens, presented?: TokenRef, retryGraceMs = 0, lateWriteMs?: number): Promise<{ outcome?: string } | undefined> {
    const { access, refresh } = tokens;
    const stored: StoredAccessToken & { hash: string } = { hash: access.ref.hash, ...storedAccess(access) };
    const at = now();
    const { rows } = await query<{ outcome?: string }>(text, [
      grantIdOf(tokens, presented),
      new Date(at),
      JSON.stringify(stored),
      new Date(Math.max(access.expiresAt, refresh?.expiresAt ?? 0)),
      refresh?.ref.hash ?? null,
      refresh ? new Date(refresh.expiresAt) : null,
      ...(presented
        ? [presented.hash, retryGraceMs > 0 ? new Date(at - retryGraceMs) : null, at, EARLIER_REFRESH_TOKENS - 1, new Date(at + lateWriteMsOf(lateWriteMs))]
        : []),
    ]);
    return rows[0];
  }

  return {
    kind: 'postgres',
    connection: pgConnection(pool),
    migrate: startMigration,

    rateLimitStore: { kind: 'postgres', statements: failureWindowStatements(quotedSchema(schema)), query, now, written: maybeSweep },

    deleteExpired,

    ...postgresClients(query, sql),

    async saveCode(code) {
      checkGrantId(code.ref.grantId);
      await query(sql.saveCode, [
        code.ref.grantId,
        code.clientId,
        code.user.sub,
        JSON.stringify(code),
        code.ref.hash,
        new Date(code.expiresAt),
      ]);
      maybeSweep();
    },

    async findCode(ref) {
      const { rows } = await query<RecordRow & { consumed: boolean }>(sql.findCode, [ref.grantId, ref.hash, new Date(now())]);
      const row = rows[0];
      return row && { ...storedObject<AuthorizationCodeRecord>(row.record), consumed: row.consumed };
    },

    async consumeCode(ref) {
      const { rowCount } = await query(sql.consumeCode, [ref.grantId, ref.hash, new Date(now())]);
      return rowCount === 1;
    },

    async issueTokens(tokens) {
      return (await install(sql.issueTokens, tokens)) !== undefined;
    },

    async findAccessToken(ref) {
      const { rows } = await query<RecordRow & { access: unknown }>(sql.findAccessToken, [ref.grantId, ref.hash]);
      const row = rows[0];
      if (!row) return undefined;
      const stored = storedObject<StoredAccessToken>(row.access);
      return stored.expiresAt > now() ? accessView(storedObject<StoredGrant>(row.record), ref, stored) : undefined;
    },

    async findRefreshToken(ref) {
      const { rows } = await query<RecordRow & { current: boolean; previous: boolean; expires_at: number; rotated_at: number | null }>(sql.findRefreshToken, [
        ref.grantId,
        ref.hash,
        new Date(now()),
      ]);
      const row = rows[0];
      if (!row) return undefined;
      const earlier = row.current ? undefined : row.previous ? { rotatedAt: Number(row.rotated_at ?? 0) } : {};
      return refreshView(storedObject<AuthorizationCodeRecord>(row.record), ref, Number(row.expires_at), earlier);
    },

    async rotateRefreshToken(presented, next, retryGraceMs = 0, lateWriteMs) {
      const row = await install(sql.rotateRefreshToken, next, presented, retryGraceMs, lateWriteMs);
      return row?.outcome === 'rotated' || row?.outcome === 'reused' ? row.outcome : 'invalid';
    },

    async confirmRotation(successor) {
      await query(sql.confirmRotation, [successor.grantId, successor.hash]);
    },

    async issueClientToken(token) {
      checkGrantId(token.ref.grantId);
      const stored = { hash: token.ref.hash, ...storedAccess(token) };
      await query(sql.issueClientToken, [
        token.ref.grantId,
        token.clientId,
        JSON.stringify(clientGrantRecord(token)),
        JSON.stringify(stored),
        new Date(token.expiresAt),
      ]);
      maybeSweep();
    },

    async revokeAccessToken(ref) {
      await query(sql.revokeAccessToken, [ref.grantId, ref.hash]);
    },

    async revokeGrant(grantId) {
      checkGrantId(grantId);
      const { rowCount } = await query(sql.revokeGrant, [grantId]);
      return (rowCount ?? 0) > 0;
    },

    async revokeUserGrants(sub, clientId) {
      const { rows } = await query<{ ended: number }>(sql.revokeUserGrants, [sub, clientId, new Date(now())]);
      return rows[0]?.ended ?? 0;
    },

    async getConsent(sub, clientId) {
      const { rows } = await query<{ scopes: string[] }>(sql.getConsent, [sub, clientId]);
      return rows[0]?.scopes;
    },

    async saveConsent(sub, clientId, scopes) {
      await query(sql.saveConsent, [sub, clientId, scopes]);
    },

    async useOnce(id, expiresAt) {
      const { rows } = await query<{ used: boolean }>(sql.useOnce, [id, new Date(expiresAt), new Date(now())]);
      return rows.length === 1;
    },
  };
}
