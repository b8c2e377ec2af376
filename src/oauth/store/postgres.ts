/**
 * The OAuth store on PostgreSQL, for several processes acting as one platform.
 *
 * Tables (in one schema, default `courier_platform`):
 *
 *   oauth_clients   (id pk, record json)
 *   oauth_codes     (grant_id, hash, record json, consumed, expires_at)          pk (grant_id, hash)
 *   oauth_tokens    (grant_id, kind access|refresh, hash, record json, consumed, expires_at)
 *                                                                         pk (grant_id, kind, hash)
 *   oauth_grants    (grant_id pk, revoked_until, expires_at)
 *   oauth_consents  (sub, client_id, scopes text[])                          pk (sub, client_id)
 *
 * Records are `json`, not `jsonb`: json keeps the exact text (key order, numbers, any string
 * jsonb would refuse such as \u0000) and costs nothing to write; nothing queries inside them.
 * Every key leads with grant_id, so one index serves both the lookups and revoking a grant.
 *
 * Time always comes from the injected clock as a parameter, never SQL `now()`, so expiry follows
 * the same clock as the other stores (and tests can move it).
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { checkClientRecord } from '../client-record.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ConsumedMarker,
  OAuthClientRecord,
  OAuthStore,
  RefreshTokenRecord,
  TokenRef,
} from './types.js';

/**
 * What the store needs from a PostgreSQL client: a `pg.Pool` fits, as does a `pg.Client` or
 * anything with the same `query`. A call without `values` may hold several statements (pg's
 * simple query protocol); the migration relies on that to run in one implicit transaction on one
 * connection.
 */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

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

export interface PostgresOAuthStore extends OAuthStore {
  /** Creates the schema, tables and indexes when missing. Idempotent, and safe to run concurrently. */
  migrate(): Promise<void>;
  /**
   * Deletes expired codes, tokens and grant rows; answers how many rows went. The store also runs
   * it by itself at most once a minute (of the injected clock) after a write.
   */
  deleteExpired(): Promise<number>;
}

const SWEEP_INTERVAL_MS = 60_000;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

interface RecordRow {
  record: unknown;
  consumed?: boolean;
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
  // The name is spliced into SQL (identifiers cannot be parameters): allow only plain names.
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema) || schema.length > 63) {
    throw configurationError('invalid_option', 'schema', `must match ${SCHEMA_NAME} (at most 63 characters)`);
  }

  const s = `"${schema}"`;
  const sql = statements(s);
  const lockKey = `courier_platform.oauth_store:${schema}`;

  const autoMigrate = options.migrate !== false;
  let ready: Promise<void> | undefined;
  let lastSweep = now();

  async function migrate(): Promise<void> {
    // One query string = one connection and one implicit transaction, so the advisory lock is
    // held until every statement is done and a concurrent migration waits instead of failing on
    // a half-created schema. The lock key is made of the validated schema name only.
    await pool.query(`SELECT pg_advisory_xact_lock(hashtext('${lockKey}'));\n${sql.migration}`);
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

  async function deleteExpired(): Promise<number> {
    const { rows } = await query<{ deleted: number }>(sql.deleteExpired, [new Date(now())]);
    return rows[0]?.deleted ?? 0;
  }

  /** Fire-and-forget clean-up after writes: bounded work, and a failure only delays it. */
  function maybeSweep(): void {
    const at = now();
    if (at - lastSweep < SWEEP_INTERVAL_MS) return;
    lastSweep = at;
    deleteExpired().catch(() => undefined);
  }

  async function findMarked<T>(text: string, ref: TokenRef): Promise<(T & ConsumedMarker) | undefined> {
    const { rows } = await query<RecordRow>(text, [ref.grantId, ref.hash, new Date(now())]);
    const row = rows[0];
    return row && { ...parse<T>(row.record), consumed: row.consumed === true };
  }

  return {
    migrate: startMigration,

    deleteExpired,

    async getClient(clientId) {
      const { rows } = await query<RecordRow>(sql.getClient, [clientId]);
      const row = rows[0];
      return row && parse<OAuthClientRecord>(row.record);
    },

    async saveClient(client) {
      const record = checkClientRecord(client);
      await query(sql.saveClient, [record.id, JSON.stringify(record)]);
    },

    async saveCode(code) {
      checkGrantId(code.ref.grantId);
      await query(sql.saveCode, [code.ref.grantId, code.ref.hash, JSON.stringify(code), new Date(code.expiresAt)]);
      maybeSweep();
    },

    async findCode(ref) {
      return findMarked<AuthorizationCodeRecord>(sql.findCode, ref);
    },

    async consumeCode(ref) {
      const { rowCount } = await query(sql.consumeCode, [ref.grantId, ref.hash, new Date(now())]);
      return rowCount === 1;
    },

    async saveTokens({ access, refresh }) {
      checkGrantId(access.ref.grantId);
      if (refresh && refresh.ref.grantId !== access.ref.grantId) {
        throw configurationError('invalid_argument', 'tokens.refresh.ref.grantId', 'must be the grant of the access token');
      }
      const lastExpiry = Math.max(access.expiresAt, refresh?.expiresAt ?? 0);
      const { rows } = await query<{ ok: boolean }>(sql.saveTokens, [
        access.ref.grantId,
        new Date(lastExpiry),
        new Date(now()),
        access.ref.hash,
        JSON.stringify(access),
        new Date(access.expiresAt),
        refresh?.ref.hash ?? null,
        refresh ? JSON.stringify(refresh) : null,
        refresh ? new Date(refresh.expiresAt) : null,
      ]);
      maybeSweep();
      return rows[0]?.ok === true;
    },

    async findAccessToken(ref) {
      const { rows } = await query<RecordRow>(sql.findAccessToken, [ref.grantId, ref.hash, new Date(now())]);
      const row = rows[0];
      return row && parse<AccessTokenRecord>(row.record);
    },

    async findRefreshToken(ref) {
      return findMarked<RefreshTokenRecord>(sql.findRefreshToken, ref);
    },

    async rotateRefreshToken(ref) {
      const { rowCount } = await query(sql.rotateRefreshToken, [ref.grantId, ref.hash, new Date(now())]);
      return rowCount === 1;
    },

    async revokeGrant(grantId, until) {
      checkGrantId(grantId);
      await query(sql.revokeGrant, [grantId, new Date(until)]);
      // The statement above ran on a snapshot taken before it waited for the grant row's lock,
      // so tokens a concurrent saveTokens committed meanwhile escaped its DELETE; this second
      // statement sees them. Any saveTokens after the revocation commits is refused instead.
      await query(sql.deleteGrantTokens, [grantId]);
    },

    async getConsent(sub, clientId) {
      const { rows } = await query<{ scopes: string[] }>(sql.getConsent, [sub, clientId]);
      return rows[0]?.scopes;
    },

    async saveConsent(sub, clientId, scopes) {
      await query(sql.saveConsent, [sub, clientId, scopes]);
    },
  };
}

/** pg parses json columns; a queryable that does not hands back text. */
function parse<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function checkGrantId(grantId: string): void {
  if (typeof grantId !== 'string' || grantId === '') throw configurationError('invalid_argument', 'grantId', 'must be a non-empty string');
}

/** Every statement, for one (already validated and quoted) schema name. */
function statements(s: string) {
  return {
    migration: `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.oauth_clients (
  id text PRIMARY KEY,
  record json NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.oauth_codes (
  grant_id text NOT NULL,
  hash text NOT NULL,
  record json NOT NULL,
  consumed boolean NOT NULL DEFAULT false,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (grant_id, hash)
);
CREATE INDEX IF NOT EXISTS oauth_codes_expires_at_idx ON ${s}.oauth_codes (expires_at);
CREATE TABLE IF NOT EXISTS ${s}.oauth_tokens (
  grant_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  hash text NOT NULL,
  record json NOT NULL,
  consumed boolean NOT NULL DEFAULT false,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (grant_id, kind, hash)
);
CREATE INDEX IF NOT EXISTS oauth_tokens_expires_at_idx ON ${s}.oauth_tokens (expires_at);
CREATE TABLE IF NOT EXISTS ${s}.oauth_grants (
  grant_id text PRIMARY KEY,
  revoked_until timestamptz,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS oauth_grants_expires_at_idx ON ${s}.oauth_grants (expires_at);
CREATE TABLE IF NOT EXISTS ${s}.oauth_consents (
  sub text NOT NULL,
  client_id text NOT NULL,
  scopes text[] NOT NULL,
  PRIMARY KEY (sub, client_id)
);`,

    getClient: `SELECT record FROM ${s}.oauth_clients WHERE id = $1`,
    saveClient: `INSERT INTO ${s}.oauth_clients (id, record) VALUES ($1, $2::json)
      ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record`,

    saveCode: `INSERT INTO ${s}.oauth_codes (grant_id, hash, record, consumed, expires_at)
      VALUES ($1, $2, $3::json, false, $4)
      ON CONFLICT (grant_id, hash) DO UPDATE
      SET record = EXCLUDED.record, consumed = false, expires_at = EXCLUDED.expires_at`,
    findCode: `SELECT record, consumed FROM ${s}.oauth_codes
      WHERE grant_id = $1 AND hash = $2 AND expires_at > $3`,
    // Row-level locking makes this atomic: a concurrent UPDATE waits, then re-checks NOT consumed.
    consumeCode: `UPDATE ${s}.oauth_codes SET consumed = true
      WHERE grant_id = $1 AND hash = $2 AND NOT consumed AND expires_at > $3`,

    /*
     * $1 grant, $2 grant's last expiry, $3 now, $4-$6 access hash/record/expiry, $7-$9 refresh
     * (nulls when none). The grant row is upserted first: ON CONFLICT DO UPDATE locks it and reads
     * its latest committed version, so a revocation committed after this statement's snapshot is
     * still seen, and a revocation running now waits for this statement (see revokeGrant).
     */
    saveTokens: `WITH grant_row AS (
        INSERT INTO ${s}.oauth_grants AS g (grant_id, revoked_until, expires_at) VALUES ($1, NULL, $2)
        ON CONFLICT (grant_id) DO UPDATE SET expires_at = GREATEST(g.expires_at, EXCLUDED.expires_at)
        RETURNING g.revoked_until
      ), allowed AS (
        SELECT 1 FROM grant_row WHERE revoked_until IS NULL OR revoked_until <= $3
      ), saved AS (
        INSERT INTO ${s}.oauth_tokens (grant_id, kind, hash, record, consumed, expires_at)
        SELECT $1, v.kind, v.hash, v.record::json, false, v.expires_at
        FROM (VALUES ('access', $4::text, $5::text, $6::timestamptz),
                     ('refresh', $7::text, $8::text, $9::timestamptz)) AS v (kind, hash, record, expires_at)
        WHERE v.hash IS NOT NULL AND EXISTS (SELECT 1 FROM allowed)
        ON CONFLICT (grant_id, kind, hash) DO UPDATE
        SET record = EXCLUDED.record, consumed = false, expires_at = EXCLUDED.expires_at
      )
      SELECT EXISTS (SELECT 1 FROM allowed) AS ok`,
    findAccessToken: `SELECT record FROM ${s}.oauth_tokens
      WHERE grant_id = $1 AND kind = 'access' AND hash = $2 AND expires_at > $3`,
    findRefreshToken: `SELECT record, consumed FROM ${s}.oauth_tokens
      WHERE grant_id = $1 AND kind = 'refresh' AND hash = $2 AND expires_at > $3`,
    rotateRefreshToken: `UPDATE ${s}.oauth_tokens SET consumed = true
      WHERE grant_id = $1 AND kind = 'refresh' AND hash = $2 AND NOT consumed AND expires_at > $3`,

    /** Records the later deadline (GREATEST skips NULL) and deletes the grant's tokens. */
    revokeGrant: `WITH revoked AS (
        INSERT INTO ${s}.oauth_grants AS g (grant_id, revoked_until, expires_at) VALUES ($1, $2, $2)
        ON CONFLICT (grant_id) DO UPDATE
        SET revoked_until = GREATEST(g.revoked_until, EXCLUDED.revoked_until),
            expires_at = GREATEST(g.expires_at, EXCLUDED.expires_at)
      )
      DELETE FROM ${s}.oauth_tokens WHERE grant_id = $1`,
    deleteGrantTokens: `DELETE FROM ${s}.oauth_tokens WHERE grant_id = $1`,

    getConsent: `SELECT scopes FROM ${s}.oauth_consents WHERE sub = $1 AND client_id = $2`,
    saveConsent: `INSERT INTO ${s}.oauth_consents (sub, client_id, scopes) VALUES ($1, $2, $3::text[])
      ON CONFLICT (sub, client_id) DO UPDATE SET scopes = EXCLUDED.scopes`,

    deleteExpired: `WITH codes AS (DELETE FROM ${s}.oauth_codes WHERE expires_at <= $1 RETURNING 1),
      tokens AS (DELETE FROM ${s}.oauth_tokens WHERE expires_at <= $1 RETURNING 1),
      grants AS (DELETE FROM ${s}.oauth_grants WHERE expires_at <= $1 RETURNING 1)
      SELECT ((SELECT count(*) FROM codes) + (SELECT count(*) FROM tokens) + (SELECT count(*) FROM grants))::int AS deleted`,
  };
}
