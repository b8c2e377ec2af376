/**
 * The SQL of the PostgreSQL OAuth store (postgres.ts describes the tables and binds the
 * parameters). Time always comes in as a parameter from the injected clock, never SQL `now()`.
 */

/** Every statement, for one (already validated and quoted) schema name. */
export function statements(s: string) {
  const grants = `${s}.oauth_grants`;
  /** An earlier token ($7, unexpired at $9 ms) in a jsonb list of [hash, expiry ms]. */
  const listed = (list: string, hash: string, at: string) =>
    `EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(${list}, '[]')) e WHERE e->>0 = ${hash} AND (e->>1)::float8 > ${at})`;
  /** `retired` (a jsonb [hash, expiry ms] or NULL) before the entries of `older`, the expired dropped (at $9 ms), at most $10. */
  const withEarlier = (retired: string, older: string) => `COALESCE((SELECT jsonb_agg(e ORDER BY i) FROM (
      SELECT e, i FROM jsonb_array_elements(COALESCE(jsonb_build_array(${retired}), '[]') || COALESCE(${older}, '[]')) WITH ORDINALITY AS t(e, i)
      WHERE jsonb_typeof(e) = 'array' AND (e->>1)::float8 > $9::float8 ORDER BY i LIMIT $10::int) kept), '[]')`;
  /** The refresh token presented ($7) is the grant's current one and has not expired ($2 = now). */
  const current = '(refresh_hash = $7::text AND refresh_expires_at > $2::timestamptz)';
  /** ... or the previous generation's, unexpired. */
  const previous = '(previous_refresh_hash = $7::text AND previous_refresh_expires_at > $2::timestamptz)';
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
  refresh_pending boolean NOT NULL DEFAULT false,
  earlier_refresh jsonb,
  access json,
  previous_access json,
  expires_at timestamptz NOT NULL
);
-- A client's own grant (client_credentials) has no user.
ALTER TABLE ${grants} ALTER COLUMN sub DROP NOT NULL;
-- Idempotent like the rest, so running the migration brings an existing table up to date.
ALTER TABLE ${grants} ADD COLUMN IF NOT EXISTS refresh_issued_at timestamptz;
ALTER TABLE ${grants} ADD COLUMN IF NOT EXISTS previous_refresh_rotated_at timestamptz;
ALTER TABLE ${grants} ADD COLUMN IF NOT EXISTS refresh_pending boolean NOT NULL DEFAULT false;
ALTER TABLE ${grants} ADD COLUMN IF NOT EXISTS earlier_refresh jsonb;
CREATE INDEX IF NOT EXISTS oauth_grants_pair_idx ON ${grants} (client_id, sub);
CREATE INDEX IF NOT EXISTS oauth_grants_expires_at_idx ON ${grants} (expires_at);
CREATE TABLE IF NOT EXISTS ${s}.oauth_consents (
  sub text NOT NULL,
  client_id text NOT NULL,
  scopes text[] NOT NULL,
  PRIMARY KEY (sub, client_id)
);
-- A deleted client's consents go a chunk at a time, found by this.
CREATE INDEX IF NOT EXISTS oauth_consents_client_idx ON ${s}.oauth_consents (client_id);
CREATE TABLE IF NOT EXISTS ${s}.oauth_used_once (
  id text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS oauth_used_once_expires_at_idx ON ${s}.oauth_used_once (expires_at);
-- Brute-force windows (docs/oauth.md, "Brute-force limits"): per counted key, the ids of the
-- attempts counted in its window and when the window ends (ms since the epoch).
CREATE TABLE IF NOT EXISTS ${s}.oauth_failure_windows (
  key text PRIMARY KEY,
  ids text[] NOT NULL,
  window_end bigint NOT NULL
);
-- The ids given back (their counts, arriving late, count nothing), each until its own end (ms), a
-- window after its own give-back; one row each, so a statement on a key reads one by its key.
CREATE TABLE IF NOT EXISTS ${s}.oauth_given_back (
  key text NOT NULL,
  id text NOT NULL,
  until bigint NOT NULL,
  PRIMARY KEY (key, id)
);
CREATE INDEX IF NOT EXISTS oauth_given_back_until_idx ON ${s}.oauth_given_back (until);
-- The callers that proved a client's secret (docs/oauth.md, "Brute-force limits"): one row per
-- client and caller (both hashed), until its mark ends (ms since the epoch).
CREATE TABLE IF NOT EXISTS ${s}.oauth_known_callers (
  client text NOT NULL,
  caller text NOT NULL,
  until bigint NOT NULL,
  PRIMARY KEY (client, caller)
);
CREATE INDEX IF NOT EXISTS oauth_known_callers_until_idx ON ${s}.oauth_known_callers (until);
-- Whether the id ($2) was given back on the key ($1) and is still remembered at $3 (ms). VOLATILE,
-- so it reads with a snapshot of its own, taken when called: a count calls it once it holds its
-- window's row, and so sees a give-back committed while it waited for that row, which its
-- statement's snapshot, taken earlier, would not.
CREATE OR REPLACE FUNCTION ${s}.oauth_given_back_at(text, text, bigint) RETURNS boolean
  LANGUAGE sql VOLATILE
  AS $$ SELECT EXISTS (SELECT 1 FROM ${s}.oauth_given_back WHERE key = $1 AND id = $2 AND until > $3) $$;`,

    getClient: `SELECT record FROM ${s}.oauth_clients WHERE id = $1`,
    saveClient: `INSERT INTO ${s}.oauth_clients (id, record) VALUES ($1, $2::json)
      ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record`,
    /** $1 after, $2 status, $3 limit, each null for none; byte order, as client-page.ts sorts. */
    listClients: `SELECT id, record FROM ${s}.oauth_clients
      WHERE ($1::text IS NULL OR id COLLATE "C" > $1::text)
        AND ($2::text IS NULL OR (json_typeof(record) = 'object' AND coalesce(record->>'status', 'active') = $2::text))
      ORDER BY id COLLATE "C" LIMIT $3::int`,
    /** The client's record, once its grants and consents are gone (deleteClientGrants, deleteClientConsents). */
    deleteClient: `DELETE FROM ${s}.oauth_clients WHERE id = $1`,
    /**
     * $1 client, $2 chunk: up to $2 of the client's grants. Every statement that deletes several
     * grants locks them in grant_id order first (revokeUserGrants too): two of them locking the
     * same rows in different orders would deadlock, and PostgreSQL would fail one after a second.
     */
    deleteClientGrants: `DELETE FROM ${grants} WHERE grant_id IN (SELECT grant_id FROM ${grants} WHERE client_id = $1 ORDER BY grant_id LIMIT $2 FOR UPDATE)`,
    /** $1 client, $2 chunk: up to $2 of the consents given to the client. */
    deleteClientConsents: `DELETE FROM ${s}.oauth_consents WHERE (sub, client_id) IN (SELECT sub, client_id FROM ${s}.oauth_consents WHERE client_id = $1 ORDER BY sub LIMIT $2 FOR UPDATE)`,

    /** $1 grant, $2 client, $3 sub, $4 code record, $5 code hash, $6 code expiry. Starts the grant afresh. */
    saveCode: `INSERT INTO ${grants} AS g (grant_id, client_id, sub, record, code_hash, code_expires_at, expires_at)
      VALUES ($1, $2, $3, $4::json, $5, $6, $6)
      ON CONFLICT (grant_id) DO UPDATE SET client_id = EXCLUDED.client_id, sub = EXCLUDED.sub,
        record = EXCLUDED.record, code_hash = EXCLUDED.code_hash, code_expires_at = EXCLUDED.code_expires_at,
        code_consumed = false, generation = 0, refresh_hash = NULL, refresh_expires_at = NULL,
        refresh_issued_at = NULL, previous_refresh_hash = NULL, previous_refresh_expires_at = NULL, previous_refresh_rotated_at = NULL,
        refresh_pending = false, earlier_refresh = NULL, access = NULL, previous_access = NULL,
        expires_at = EXCLUDED.expires_at`,
    /** $1 grant, $2 client, $3 grant record, $4 access token (json with its hash), $5 its expiry. No user, no code (an empty hash matches none). */
    issueClientToken: `INSERT INTO ${grants} AS g (grant_id, client_id, sub, record, code_hash, code_expires_at, code_consumed, generation, access, expires_at)
      VALUES ($1, $2, NULL, $3::json, '', 'epoch', true, 1, $4::json, $5)
      ON CONFLICT (grant_id) DO UPDATE SET client_id = EXCLUDED.client_id, sub = NULL, record = EXCLUDED.record, code_hash = '',
        code_expires_at = 'epoch', code_consumed = true, generation = 1, refresh_hash = NULL, refresh_expires_at = NULL,
        refresh_issued_at = NULL, previous_refresh_hash = NULL, previous_refresh_expires_at = NULL, previous_refresh_rotated_at = NULL,
        refresh_pending = false, earlier_refresh = NULL, access = EXCLUDED.access, previous_access = NULL,
        expires_at = EXCLUDED.expires_at`,
    // An exchanged code stays known while any part of its grant lives (findCode in types.ts).
    findCode: `SELECT record, code_consumed AS consumed FROM ${grants}
      WHERE grant_id = $1 AND code_hash = $2 AND code_hash <> ''
        AND (code_expires_at > $3 OR (code_consumed AND expires_at > $3))`,
    // Row-level locking makes this atomic: a concurrent UPDATE waits, then re-checks NOT code_consumed.
    consumeCode: `UPDATE ${grants} SET code_consumed = true
      WHERE grant_id = $1 AND code_hash = $2 AND NOT code_consumed AND code_expires_at > $3`,

    /*
     * The two issuances share their parameters: $1 grant, $2 now, $3 access token (json with its
     * hash), $4 the newest expiry, $5-$6 refresh hash and expiry (null when none), $7 the refresh
     * token presented (refresh only).
     */
    issueTokens: `UPDATE ${grants} SET generation = 1, access = $3::json, refresh_hash = $5::text,
        refresh_expires_at = $6::timestamptz, refresh_issued_at = $2::timestamptz, refresh_pending = false,
        expires_at = GREATEST(expires_at, $4::timestamptz)
      WHERE grant_id = $1 AND code_consumed AND generation = 0 AND expires_at > $2::timestamptz
      RETURNING true AS rotated`,
    /*
     * One statement (see rotateRefreshToken in types.ts): `g` locks the row and decides from it
     * (a statement that waited for the lock reads the row as the other one left it), `moved`
     * installs the tokens for a rotation or a retry, and the outcome comes back. $8 is the
     * earliest rotation time an opt-in grace retry may repeat (null for none), $9 now in ms, $10
     * how many older tokens to keep, $11 the earliest install time of the current generation
     * that makes this request a late write (`stale`: now plus lateWriteMs, see types.ts). A retry
     * keeps the previous refresh and access tokens and moves the replaced refresh token into
     * earlier_refresh.
     */
    rotateRefreshToken: `WITH g AS (
        SELECT grant_id, ${current} AS cur, refresh_issued_at >= $11::timestamptz AS stale,
          ${previous} AND (refresh_pending OR COALESCE(previous_refresh_rotated_at >= $8::timestamptz, false)) AS retry,
          ${previous} OR ${listed('earlier_refresh', '$7::text', '$9::float8')} AS earlier
        FROM ${grants} WHERE grant_id = $1 AND expires_at > $2::timestamptz FOR UPDATE
      ), decided AS (
        SELECT grant_id, cur, CASE WHEN cur OR (NOT stale AND retry) THEN 'rotated' WHEN NOT stale AND earlier THEN 'reused' ELSE 'invalid' END AS outcome FROM g
      ), moved AS (
        UPDATE ${grants} AS t SET
          generation = t.generation + 1,
          previous_access = CASE WHEN d.cur THEN t.access ELSE t.previous_access END,
          access = $3::json,
          earlier_refresh = CASE WHEN d.cur
            THEN ${withEarlier(`CASE WHEN t.previous_refresh_hash IS NULL THEN NULL ELSE jsonb_build_array(t.previous_refresh_hash, ${epochMs('t.previous_refresh_expires_at')}) END`, 't.earlier_refresh')}
            ELSE ${withEarlier(`jsonb_build_array(t.refresh_hash, ${epochMs('t.refresh_expires_at')})`, 't.earlier_refresh')} END,
          previous_refresh_hash = CASE WHEN d.cur THEN t.refresh_hash ELSE t.previous_refresh_hash END,
          previous_refresh_expires_at = CASE WHEN d.cur THEN t.refresh_expires_at ELSE t.previous_refresh_expires_at END,
          previous_refresh_rotated_at = CASE WHEN d.cur THEN $2::timestamptz ELSE t.previous_refresh_rotated_at END,
          refresh_hash = $5::text, refresh_expires_at = $6::timestamptz, refresh_issued_at = $2::timestamptz, refresh_pending = true,
          expires_at = GREATEST(t.expires_at, $4::timestamptz)
        FROM decided d WHERE t.grant_id = d.grant_id AND d.outcome = 'rotated'
      )
      SELECT outcome FROM decided`,
    /** $1 grant, $2 the successor's hash: its rotation is no longer pending. */
    confirmRotation: `UPDATE ${grants} SET refresh_pending = false WHERE grant_id = $1 AND refresh_hash = $2 AND refresh_pending`,
    findAccessToken: `SELECT record, CASE WHEN access->>'hash' = $2 THEN access ELSE previous_access END AS access
      FROM ${grants} WHERE grant_id = $1 AND (access->>'hash' = $2 OR previous_access->>'hash' = $2)`,
    /** $1 grant, $2 hash, $3 now: the current token, the previous one, or an older one still listed. */
    findRefreshToken: `SELECT record, current, previous, expires_at, rotated_at FROM (
        SELECT record, refresh_hash = $2 AND refresh_expires_at > $3 AS current,
          previous_refresh_hash = $2 AND previous_refresh_expires_at > $3 AS previous,
          CASE WHEN refresh_hash = $2 THEN ${epochMs('refresh_expires_at')}
            WHEN previous_refresh_hash = $2 THEN ${epochMs('previous_refresh_expires_at')}
            ELSE (SELECT (e->>1)::float8 FROM jsonb_array_elements(COALESCE(earlier_refresh, '[]')) e WHERE e->>0 = $2 LIMIT 1) END AS expires_at,
          ${epochMs('previous_refresh_rotated_at')} AS rotated_at
        FROM ${grants} WHERE grant_id = $1) r
      WHERE current OR previous OR expires_at > ${epochMs('$3::timestamptz')}`,
    revokeAccessToken: `UPDATE ${grants} SET
        access = CASE WHEN access->>'hash' = $2 THEN NULL ELSE access END,
        previous_access = CASE WHEN previous_access->>'hash' = $2 THEN NULL ELSE previous_access END
      WHERE grant_id = $1 AND (access->>'hash' = $2 OR previous_access->>'hash' = $2)`,
    revokeGrant: `DELETE FROM ${grants} WHERE grant_id = $1`,
    /** $3 now: the rows past their expiry were ended already, only not yet swept. */
    revokeUserGrants: `WITH locked AS (SELECT grant_id FROM ${grants} WHERE client_id = $2 AND sub = $1 ORDER BY grant_id FOR UPDATE),
        ended AS (DELETE FROM ${grants} WHERE grant_id IN (SELECT grant_id FROM locked) RETURNING expires_at),
        forgotten AS (DELETE FROM ${s}.oauth_consents WHERE sub = $1 AND client_id = $2)
      SELECT (count(*) FILTER (WHERE expires_at > $3))::int AS ended FROM ended`,

    getConsent: `SELECT scopes FROM ${s}.oauth_consents WHERE sub = $1 AND client_id = $2`,
    saveConsent: `INSERT INTO ${s}.oauth_consents (sub, client_id, scopes) VALUES ($1, $2, $3::text[])
      ON CONFLICT (sub, client_id) DO UPDATE SET scopes = EXCLUDED.scopes`,

    /** $1 id, $2 its expiry, $3 now: a row comes back only for the first use (an expired one counts as unused). */
    useOnce: `INSERT INTO ${s}.oauth_used_once AS u (id, expires_at) VALUES ($1, $2)
      ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE u.expires_at <= $3
      RETURNING true AS used`,

    /**
     * $1 now, $2 now in ms. Brute-force windows go once ended or empty (every attempt given
     * back), ids given back once forgotten. Rows of either that a count or a give-back holds
     * right now are skipped for the next sweep: waiting for them while holding others could
     * deadlock with a give-back, which holds its window's row and its id's.
     */
    deleteExpired: `WITH gone AS (DELETE FROM ${grants} WHERE grant_id IN (SELECT grant_id FROM ${grants}
          WHERE expires_at <= $1 LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1),
        used AS (DELETE FROM ${s}.oauth_used_once WHERE id IN (SELECT id FROM ${s}.oauth_used_once
          WHERE expires_at <= $1 LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1),
        windows AS (DELETE FROM ${s}.oauth_failure_windows WHERE key IN (SELECT key FROM ${s}.oauth_failure_windows
          WHERE window_end <= $2::bigint OR cardinality(ids) = 0 LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1),
        forgotten AS (DELETE FROM ${s}.oauth_given_back WHERE (key, id) IN (SELECT key, id FROM ${s}.oauth_given_back
          WHERE until <= $2::bigint LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1),
        unknown AS (DELETE FROM ${s}.oauth_known_callers WHERE (client, caller) IN (SELECT client, caller FROM ${s}.oauth_known_callers
          WHERE until <= $2::bigint LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING 1)
      SELECT (SELECT count(*) FROM gone)::int AS deleted,
        greatest((SELECT count(*) FROM gone), (SELECT count(*) FROM used), (SELECT count(*) FROM windows), (SELECT count(*) FROM forgotten),
          (SELECT count(*) FROM unknown))::int AS most`,
  };
}

/**
 * The brute-force windows' statements (failure-windows.ts). $1 key, $2 attempt id, $3 now (ms),
 * $4 the window (ms). Every one is a single statement on the key's row of oauth_failure_windows
 * (a give-back too, which inserts the row when it has none): row locking serialises concurrent
 * attempts, so a count is exact, and a count and the give-back of its id never miss each other.
 * The ids given back are rows of oauth_given_back, each read and written by its primary key, so
 * a statement costs the same however many a busy key remembers.
 */
export function failureWindowStatements(s: string) {
  const windows = `${s}.oauth_failure_windows`;
  const ended = 'w.window_end <= $3::bigint OR cardinality(w.ids) = 0';
  // Called where the statement holds the key's row (see the function in the migration).
  const givenBack = `${s}.oauth_given_back_at($1::text, $2::text, $3::bigint)`;
  return {
    /**
     * A window that ended, or whose attempts were all given back, starts anew; an id already
     * there changes nothing; an id given back counts nothing (an ended window then answers none).
     */
    reserve: `INSERT INTO ${windows} AS w (key, ids, window_end)
      VALUES ($1, CASE WHEN ${givenBack} THEN '{}' ELSE ARRAY[$2::text] END, $3::bigint + $4::bigint)
      ON CONFLICT (key) DO UPDATE SET (ids, window_end) = (SELECT
          CASE WHEN g.given THEN (CASE WHEN ${ended} THEN '{}' ELSE w.ids END)
            WHEN ${ended} THEN ARRAY[$2::text]
            WHEN $2::text = ANY(w.ids) THEN w.ids ELSE array_append(w.ids, $2::text) END,
          CASE WHEN NOT g.given AND (${ended}) THEN EXCLUDED.window_end ELSE w.window_end END
        FROM (SELECT ${givenBack} AS given) g)
      RETURNING cardinality(ids) AS count, CASE WHEN cardinality(ids) = 0 THEN $3::bigint ELSE window_end END AS window_end`,
    /**
     * The id leaves the window and is remembered as given back for a window's length from now,
     * its own end, whether it was counted or not: a count of it arriving later (a copy of one
     * that landed, or one that never did) counts nothing. Given again, it gets the new end. The
     * window's row is written whatever it holds, and both writes commit together: a count
     * waiting for that row then finds the id given back (see oauth_given_back_at).
     */
    giveBack: `WITH remembered AS (
        INSERT INTO ${s}.oauth_given_back (key, id, until) VALUES ($1, $2, $3::bigint + $4::bigint)
        ON CONFLICT (key, id) DO UPDATE SET until = EXCLUDED.until
      )
      INSERT INTO ${windows} AS w (key, ids, window_end) VALUES ($1, '{}', 0)
      ON CONFLICT (key) DO UPDATE SET ids = array_remove(w.ids, $2::text)`,
    peek: `SELECT cardinality(ids) AS count, window_end FROM ${windows} WHERE key = $1 AND window_end > $2::bigint AND cardinality(ids) > 0`,
    /**
     * Known callers (known-callers.ts): $1 client, $2 caller, $3 now (ms), $4 a mark's life (ms),
     * $5 most kept per client. The mark is written (or renewed), and the client's other marks
     * that ended, or beyond the most recent $5 - 1, are deleted in the same statement. Two marks
     * written at once for one client may each keep the other's row: one more than $5 stays until
     * the client's next mark.
     */
    rememberCaller: `WITH marked AS (
        INSERT INTO ${s}.oauth_known_callers (client, caller, until) VALUES ($1, $2, $3::bigint + $4::bigint)
        ON CONFLICT (client, caller) DO UPDATE SET until = EXCLUDED.until
      )
      DELETE FROM ${s}.oauth_known_callers WHERE client = $1 AND caller <> $2 AND (until <= $3::bigint OR caller IN (
        SELECT caller FROM ${s}.oauth_known_callers WHERE client = $1 AND caller <> $2 AND until > $3::bigint
        ORDER BY until DESC, caller OFFSET $5::int - 1))`,
    /** $1 client, $2 caller, $3 now (ms): a row when the mark is live. */
    knownCaller: `SELECT 1 AS known FROM ${s}.oauth_known_callers WHERE client = $1 AND caller = $2 AND until > $3::bigint`,
  };
}
