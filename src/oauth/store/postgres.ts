/**
 * The OAuth store on PostgreSQL, for several processes acting as one platform.
 *
 * Longer than the project's other modules on purpose: every statement stays beside the call that
 * binds its parameters, so each operation reads in one place.
 *
 * Tables (in one schema, default `courier_platform`):
 *
 *   oauth_clients   (id pk, record json)
 *   oauth_grants    (grant_id pk, client_id, sub, the grant record's columns, expires_at)
 *                                                      indexes (client_id, sub) and (expires_at)
 *   oauth_consents  (sub, client_id, scopes text[])                          pk (sub, client_id)
 *   oauth_used_once (id pk, expires_at)                  single-use markers (consent transactions)
 *   oauth_rate_limits (key pk, points, expire)   brute-force counters, in rate-limiter-flexible's layout
 *
 * One row per grant, bounded whatever the number of refreshes (see types.ts): the code record
 * and the code's hash, expiry and consumed flag; the generation; the current and the previous
 * refresh token (hash and expiry); the current and the previous access token (json: hash,
 * scope, expiresAt). Every operation on a grant is one statement on its row: row locking
 * serialises concurrent ones, and a statement that fails changes nothing.
 *
 * Records are `json`, not `jsonb`: json keeps the exact text (key order, numbers, any string
 * jsonb would refuse such as \u0000) and costs nothing to write.
 *
 * Time always comes from the injected clock as a parameter, never SQL `now()`, so expiry follows
 * the same clock as the other stores (and tests can move it).
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { checkClientRecord } from '../client-record.js';
import type { PgQueryable } from '../../core/store-clients.js';
import { accessView, checkGrantId, clientGrantRecord, grantIdOf, refreshView, storedAccess, type StoredAccessToken, type StoredGrant } from './grant-record.js';
import type { AuthorizationCodeRecord, NewTokens, OAuthClientRecord, OAuthStore, TokenRef } from './types.js';

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

/** What the brute-force limits need to count on this store (rate-limiter-flexible's RateLimiterPostgres). */
export interface PostgresRateLimitStore {
  readonly kind: 'postgres';
  readonly pool: PgQueryable;
  readonly schema: string;
  /** Resolves once the store's migration (if any) made the schema. */
  ready(): Promise<void>;
  /** Whether the limiter may create its table; false with `migrate: false`. */
  readonly createTable: boolean;
}

export interface PostgresOAuthStore extends OAuthStore {
  /** Lets the client-authentication limit and `createLoginThrottle({ store })` count in this schema. */
  readonly rateLimitStore: PostgresRateLimitStore;
  /** Creates the schema, tables and indexes when missing. Idempotent, and safe to run concurrently. */
  migrate(): Promise<void>;
  /**
   * Deletes the rows of expired grants; answers how many went. The store also runs it by itself
   * at most once a minute (of the injected clock) after a new grant.
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

  /** The first issuance, or a refresh presenting a refresh token: one statement either way. */
  async function install(text: string, tokens: NewTokens, presented?: TokenRef, retryGraceMs = 0): Promise<{ rotated: boolean; stale?: boolean } | undefined> {
    const { access, refresh } = tokens;
    const stored: StoredAccessToken & { hash: string } = { hash: access.ref.hash, ...storedAccess(access) };
    const at = now();
    const { rows } = await query<{ rotated: boolean; stale?: boolean }>(text, [
      grantIdOf(tokens, presented),
      new Date(at),
      JSON.stringify(stored),
      new Date(Math.max(access.expiresAt, refresh?.expiresAt ?? 0)),
      refresh?.ref.hash ?? null,
      refresh ? new Date(refresh.expiresAt) : null,
      ...(presented ? [presented.hash, retryGraceMs > 0 ? new Date(at - retryGraceMs) : null] : []),
    ]);
    return rows[0];
  }

  return {
    migrate: startMigration,

    rateLimitStore: { kind: 'postgres', pool, schema, ready: ensureReady, createTable: autoMigrate },

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

    async listClients(page = {}) {
      const { rows } = await query<RecordRow>(sql.listClients, [page.after ?? null, page.status ?? null, page.limit ?? null]);
      return rows.map((row) => parse<OAuthClientRecord>(row.record));
    },

    async deleteClient(clientId) {
      const { rowCount } = await query(sql.deleteClient, [clientId]);
      return (rowCount ?? 0) > 0;
    },

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
      return row && { ...parse<AuthorizationCodeRecord>(row.record), consumed: row.consumed };
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
      const stored = parse<StoredAccessToken>(row.access);
      return stored.expiresAt > now() ? accessView(parse<StoredGrant>(row.record), ref, stored) : undefined;
    },

    async findRefreshToken(ref) {
      const { rows } = await query<RecordRow & { current: boolean; expires_at: number; rotated_at: number | null }>(sql.findRefreshToken, [
        ref.grantId,
        ref.hash,
        new Date(now()),
      ]);
      const row = rows[0];
      if (!row) return undefined;
      return refreshView(parse<AuthorizationCodeRecord>(row.record), ref, Number(row.expires_at), row.current ? undefined : Number(row.rotated_at ?? 0));
    },

    async rotateRefreshToken(presented, next, retryGraceMs = 0) {
      const row = await install(sql.rotateRefreshToken, next, presented, retryGraceMs);
      return !row || row.stale ? 'invalid' : row.rotated ? 'rotated' : 'reused';
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
      await query(sql.revokeGrant, [grantId]);
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

/** pg parses json columns; a queryable that does not hands back text. */
function parse<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** Every statement, for one (already validated and quoted) schema name. */
function statements(s: string) {
  const grants = `${s}.oauth_grants`;
  /** The refresh token presented ($7) is the grant's current one and has not expired ($2 = now). */
  const current = '(refresh_hash = $7::text AND refresh_expires_at > $2::timestamptz)';
  const ifCurrent = (value: string, otherwise: string) => `CASE WHEN ${current} THEN ${value} ELSE ${otherwise} END`;
  /** ... or the previous generation's, unexpired, and this is a retry within the grace ($8). */
  const previous = '(previous_refresh_hash = $7::text AND previous_refresh_expires_at > $2::timestamptz)';
  const retry = `(${previous} AND previous_refresh_rotated_at >= $8::timestamptz AND refresh_issued_at <= $2::timestamptz)`;
  /** The row takes the new tokens: a rotation or a retry. */
  const ifMoves = (value: string, otherwise: string) => `CASE WHEN ${current} OR ${retry} THEN ${value} ELSE ${otherwise} END`;
  const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;
  return {
    migration: `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.oauth_clients (
  id text PRIMARY KEY,
  record json NOT NULL
);
CREATE TABLE IF NOT EXISTS ${grants} (
  grant_id text PRIMARY KEY,
  client_id text NOT NULL,
  sub text NOT NULL,
  record json NOT NULL,
  code_hash text NOT NULL,
  code_expires_at timestamptz NOT NULL,
  code_consumed boolean NOT NULL DEFAULT false,
  generation integer NOT NULL DEFAULT 0,
  refresh_hash text,
  refresh_expires_at timestamptz,
  refresh_issued_at timestamptz,
  previous_refresh_hash text,
  previous_refresh_expires_at timestamptz,
  previous_refresh_rotated_at timestamptz,
  access json,
  previous_access json,
  expires_at timestamptz NOT NULL
);
-- A client's own grant (client_credentials) has no user.
ALTER TABLE ${grants} ALTER COLUMN sub DROP NOT NULL;
-- Idempotent like the rest, so running the migration brings an existing table up to date.
ALTER TABLE ${grants} ADD COLUMN IF NOT EXISTS refresh_issued_at timestamptz;
ALTER TABLE ${grants} ADD COLUMN IF NOT EXISTS previous_refresh_rotated_at timestamptz;
CREATE INDEX IF NOT EXISTS oauth_grants_pair_idx ON ${grants} (client_id, sub);
CREATE INDEX IF NOT EXISTS oauth_grants_expires_at_idx ON ${grants} (expires_at);
CREATE TABLE IF NOT EXISTS ${s}.oauth_consents (
  sub text NOT NULL,
  client_id text NOT NULL,
  scopes text[] NOT NULL,
  PRIMARY KEY (sub, client_id)
);
CREATE TABLE IF NOT EXISTS ${s}.oauth_used_once (
  id text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS oauth_used_once_expires_at_idx ON ${s}.oauth_used_once (expires_at);
-- Brute-force counters (docs/oauth.md), in the layout rate-limiter-flexible's RateLimiterPostgres reads.
CREATE TABLE IF NOT EXISTS ${s}.oauth_rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);`,

    getClient: `SELECT record FROM ${s}.oauth_clients WHERE id = $1`,
    saveClient: `INSERT INTO ${s}.oauth_clients (id, record) VALUES ($1, $2::json)
      ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record`,
    /** $1 after, $2 status, $3 limit, each null for none; byte order, as client-page.ts sorts. */
    listClients: `SELECT record FROM ${s}.oauth_clients
      WHERE ($1::text IS NULL OR id COLLATE "C" > $1::text) AND ($2::text IS NULL OR coalesce(record->>'status', 'active') = $2::text)
      ORDER BY id COLLATE "C" LIMIT $3::int`,
    /** The client, every grant of it and every consent given to it. */
    deleteClient: `WITH ended AS (DELETE FROM ${grants} WHERE client_id = $1), forgotten AS (DELETE FROM ${s}.oauth_consents WHERE client_id = $1)
      DELETE FROM ${s}.oauth_clients WHERE id = $1`,

    /** $1 grant, $2 client, $3 sub, $4 code record, $5 code hash, $6 code expiry. Starts the grant afresh. */
    saveCode: `INSERT INTO ${grants} AS g (grant_id, client_id, sub, record, code_hash, code_expires_at, expires_at)
      VALUES ($1, $2, $3, $4::json, $5, $6, $6)
      ON CONFLICT (grant_id) DO UPDATE SET client_id = EXCLUDED.client_id, sub = EXCLUDED.sub,
        record = EXCLUDED.record, code_hash = EXCLUDED.code_hash, code_expires_at = EXCLUDED.code_expires_at,
        code_consumed = false, generation = 0, refresh_hash = NULL, refresh_expires_at = NULL,
        refresh_issued_at = NULL, previous_refresh_hash = NULL, previous_refresh_expires_at = NULL, previous_refresh_rotated_at = NULL, access = NULL, previous_access = NULL,
        expires_at = EXCLUDED.expires_at`,
    /** $1 grant, $2 client, $3 grant record, $4 access token (json with its hash), $5 its expiry. No user, no code (an empty hash matches none). */
    issueClientToken: `INSERT INTO ${grants} AS g (grant_id, client_id, sub, record, code_hash, code_expires_at, code_consumed, generation, access, expires_at)
      VALUES ($1, $2, NULL, $3::json, '', 'epoch', true, 1, $4::json, $5)
      ON CONFLICT (grant_id) DO UPDATE SET client_id = EXCLUDED.client_id, sub = NULL, record = EXCLUDED.record, code_hash = '',
        code_expires_at = 'epoch', code_consumed = true, generation = 1, refresh_hash = NULL, refresh_expires_at = NULL,
        refresh_issued_at = NULL, previous_refresh_hash = NULL, previous_refresh_expires_at = NULL, previous_refresh_rotated_at = NULL, access = EXCLUDED.access, previous_access = NULL,
        expires_at = EXCLUDED.expires_at`,
    findCode: `SELECT record, code_consumed AS consumed FROM ${grants}
      WHERE grant_id = $1 AND code_hash = $2 AND code_expires_at > $3`,
    // Row-level locking makes this atomic: a concurrent UPDATE waits, then re-checks NOT code_consumed.
    consumeCode: `UPDATE ${grants} SET code_consumed = true
      WHERE grant_id = $1 AND code_hash = $2 AND NOT code_consumed AND code_expires_at > $3`,

    /*
     * The two issuances share their parameters: $1 grant, $2 now, $3 access token (json with its
     * hash), $4 the newest expiry, $5-$6 refresh hash and expiry (null when none), $7 the refresh
     * token presented (refresh only).
     */
    issueTokens: `UPDATE ${grants} SET generation = 1, access = $3::json, refresh_hash = $5::text,
        refresh_expires_at = $6::timestamptz, refresh_issued_at = $2::timestamptz, expires_at = GREATEST(expires_at, $4::timestamptz)
      WHERE grant_id = $1 AND code_consumed AND generation = 0 AND expires_at > $2::timestamptz
      RETURNING true AS rotated`,
    /*
     * One statement: the row lock serialises concurrent refreshes, and a refresh that waited
     * re-reads the row, finds its token now in previous_refresh_hash and answers a reuse, or a
     * retry within the grace ($8: the earliest rotation time a retry may repeat, null for no
     * grace) from a request no older than the current generation (see previousTokenOutcome). Every SET expression reads the row as it was before this
     * statement; RETURNING reads it after.
     */
    rotateRefreshToken: `UPDATE ${grants} SET
        generation = ${ifMoves('generation + 1', 'generation')},
        previous_access = ${ifMoves('access', 'previous_access')},
        access = ${ifMoves('$3::json', 'access')},
        previous_refresh_hash = ${ifCurrent('refresh_hash', 'previous_refresh_hash')},
        previous_refresh_expires_at = ${ifCurrent('refresh_expires_at', 'previous_refresh_expires_at')},
        previous_refresh_rotated_at = ${ifCurrent('$2::timestamptz', 'previous_refresh_rotated_at')},
        refresh_hash = ${ifMoves('$5::text', 'refresh_hash')},
        refresh_expires_at = ${ifMoves('$6::timestamptz', 'refresh_expires_at')},
        refresh_issued_at = ${ifMoves('$2::timestamptz', 'refresh_issued_at')},
        expires_at = ${ifMoves('GREATEST(expires_at, $4::timestamptz)', 'expires_at')}
      WHERE grant_id = $1 AND (${current} OR ${previous})
      RETURNING refresh_hash = $5::text AS rotated, $8::timestamptz IS NOT NULL AND refresh_issued_at > $2::timestamptz AS stale`,
    findAccessToken: `SELECT record, CASE WHEN access->>'hash' = $2 THEN access ELSE previous_access END AS access
      FROM ${grants} WHERE grant_id = $1 AND (access->>'hash' = $2 OR previous_access->>'hash' = $2)`,
    findRefreshToken: `SELECT record, refresh_hash = $2 AS current,
        ${epochMs('CASE WHEN refresh_hash = $2 THEN refresh_expires_at ELSE previous_refresh_expires_at END')} AS expires_at,
        ${epochMs('previous_refresh_rotated_at')} AS rotated_at
      FROM ${grants} WHERE grant_id = $1
        AND ((refresh_hash = $2 AND refresh_expires_at > $3) OR (previous_refresh_hash = $2 AND previous_refresh_expires_at > $3))`,
    revokeAccessToken: `UPDATE ${grants} SET
        access = CASE WHEN access->>'hash' = $2 THEN NULL ELSE access END,
        previous_access = CASE WHEN previous_access->>'hash' = $2 THEN NULL ELSE previous_access END
      WHERE grant_id = $1 AND (access->>'hash' = $2 OR previous_access->>'hash' = $2)`,
    revokeGrant: `DELETE FROM ${grants} WHERE grant_id = $1`,
    /** $3 now: the rows past their expiry were ended already, only not yet swept. */
    revokeUserGrants: `WITH ended AS (DELETE FROM ${grants} WHERE client_id = $2 AND sub = $1 RETURNING expires_at),
        forgotten AS (DELETE FROM ${s}.oauth_consents WHERE sub = $1 AND client_id = $2)
      SELECT (count(*) FILTER (WHERE expires_at > $3))::int AS ended FROM ended`,

    getConsent: `SELECT scopes FROM ${s}.oauth_consents WHERE sub = $1 AND client_id = $2`,
    saveConsent: `INSERT INTO ${s}.oauth_consents (sub, client_id, scopes) VALUES ($1, $2, $3::text[])
      ON CONFLICT (sub, client_id) DO UPDATE SET scopes = EXCLUDED.scopes`,

    /** $1 id, $2 its expiry, $3 now: a row comes back only for the first use (an expired one counts as unused). */
    useOnce: `INSERT INTO ${s}.oauth_used_once AS u (id, expires_at) VALUES ($1, $2)
      ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE u.expires_at <= $3
      RETURNING true AS used`,

    deleteExpired: `WITH gone AS (DELETE FROM ${grants} WHERE expires_at <= $1 RETURNING 1),
        used AS (DELETE FROM ${s}.oauth_used_once WHERE expires_at <= $1)
      SELECT count(*)::int AS deleted FROM gone`,
  };
}
