/**
 * What only the PostgreSQL OAuthStore can get wrong: its schema name, statements, migration and
 * clean-up. The conformance run is in stores.test.ts.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPostgresOAuthStore, type PgQueryable } from '../../src/oauth/store/index.js';
import { databaseUrl, describePostgres, uniqueName } from '../support/services.js';
import { accessView, BASE_TIME, codeRecord, HOUR, issueGrant, MINUTE, nextTokens } from './store-conformance.js';
import { clientRecord } from './store-conformance/fixtures.js';
import { refreshOnce, testClock } from './store-helpers.js';

describe('PostgreSQL OAuthStore options', () => {
  const unused: PgQueryable = { query: async () => ({ rows: [], rowCount: 0 }) };

  it.each(['Courier', 'a-b', '1abc', 'x; DROP TABLE y', '', 'a"b', 'a'.repeat(64)])(
    'throws a TypeError for the schema name %j',
    (schema) => {
      expect(() => createPostgresOAuthStore({ pool: unused, schema })).toThrow(TypeError);
    },
  );
});

describePostgres('PostgreSQL OAuthStore', () => {
  describe('PostgreSQL specifics', () => {
    let pool: pg.Pool;
    let schema: string;
    const clock = testClock();

    beforeAll(() => {
      pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
    });
    beforeEach(() => {
      schema = uniqueName('oauth');
      clock.now = BASE_TIME;
    });
    afterEach(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    });
    afterAll(async () => {
      await pool.end();
    });

    const countRows = async (table: string) =>
      Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".${table}`)).rows[0]!.n);

    /** The pool, counting the statements sent; `corrupt` makes the next one fail on the server. */
    function countingPool() {
      const counted = { statements: 0, corruptNext: false };
      const queryable: PgQueryable = {
        query: (text, values) => {
          counted.statements += 1;
          if (!counted.corruptNext || !values) return pool.query(text, values);
          counted.corruptNext = false;
          // Every timestamp parameter becomes text the server refuses, so the statement fails there.
          return pool.query(text, values.map((value) => (value instanceof Date ? 'not a timestamp' : value)));
        },
      };
      return { queryable, counted };
    }

    it('migrates idempotently, and two concurrent migrations of a fresh schema both succeed', async () => {
      const first = createPostgresOAuthStore({ pool, schema, migrate: false });
      const second = createPostgresOAuthStore({ pool, schema, migrate: false });
      await Promise.all([first.migrate(), second.migrate(), first.migrate()]);
      await first.migrate();
      const { rows } = await pool.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema],
      );
      expect(rows.map((row) => row.table_name)).toEqual(['oauth_clients', 'oauth_consents', 'oauth_failure_windows', 'oauth_given_back', 'oauth_grants', 'oauth_known_callers', 'oauth_used_once']);
    });

    it('creates its schema on first use unless told not to', async () => {
      const manual = createPostgresOAuthStore({ pool, schema, migrate: false });
      await expect(manual.getClient('x')).rejects.toThrow(/does not exist/);
      const automatic = createPostgresOAuthStore({ pool, schema });
      expect(await automatic.getClient('x')).toBeUndefined();
    });

    it('answers findAccessToken with one statement, and a refresh with two', async () => {
      const { queryable, counted } = countingPool();
      const store = createPostgresOAuthStore({ pool: queryable, schema, now: clock.read });
      const { code, access, refresh } = await issueGrant(store);
      counted.statements = 0;
      expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
      expect(counted.statements).toBe(1);

      counted.statements = 0;
      expect((await refreshOnce(store, refresh!.ref)).outcome).toBe('rotated');
      expect(counted.statements).toBe(2);
    });

    it('leaves the grant as it was when the rotation fails on the server, so the same refresh token works again', async () => {
      const { queryable, counted } = countingPool();
      const store = createPostgresOAuthStore({ pool: queryable, schema, now: clock.read });
      const { code, access, refresh } = await issueGrant(store);
      const tokens = nextTokens(code.ref.grantId);
      counted.corruptNext = true;
      await expect(store.rotateRefreshToken(refresh!.ref, tokens)).rejects.toThrow(/timestamp|time zone|date/i);
      expect(await store.findAccessToken(tokens.access.ref)).toBeUndefined();
      expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
      const retry = await refreshOnce(store, refresh!.ref);
      expect(retry.outcome).toBe('rotated');
      expect(await store.findAccessToken(retry.tokens.access.ref)).toStrictEqual(accessView(code, retry.tokens.access));
    });

    it('deleteExpired removes the rows of expired grants, keeps live ones and answers the count', async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      await store.saveCode(codeRecord('grant-a', { expiresAt: BASE_TIME + MINUTE }));
      await store.saveCode(codeRecord('grant-b', { expiresAt: BASE_TIME + 10 * HOUR }));
      await issueGrant(store, { grantId: 'grant-c', access: { expiresAt: BASE_TIME + MINUTE }, refresh: { expiresAt: BASE_TIME + 2 * MINUTE } });
      clock.now = BASE_TIME + 5 * MINUTE;
      expect(await store.deleteExpired()).toBe(2);
      expect(await countRows('oauth_grants')).toBe(1);
      expect(await store.deleteExpired()).toBe(0);
    });

    it('deletes a backlog of expired grants 10,000 a statement, so the clean-up never holds a connection for long', async () => {
      const { queryable, counted } = countingPool();
      const store = createPostgresOAuthStore({ pool: queryable, schema, now: clock.read });
      await store.saveCode(codeRecord('grant-live', { expiresAt: BASE_TIME + HOUR }));
      await pool.query(
        `INSERT INTO "${schema}".oauth_grants (grant_id, client_id, sub, record, code_hash, code_expires_at, expires_at)
          SELECT 'g' || i, 'c', 's', '{}', 'h', $1, $1 FROM generate_series(1, 25000) i`,
        [new Date(BASE_TIME - MINUTE)],
      );
      counted.statements = 0;
      expect(await store.deleteExpired()).toBe(25_000);
      expect(counted.statements).toBe(3);
      expect(await countRows('oauth_grants')).toBe(1);
    });

    it('cleans up by itself after a write once a minute of its clock has passed', async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      await store.saveCode(codeRecord('grant-a', { expiresAt: BASE_TIME + MINUTE }));
      clock.now = BASE_TIME + 2 * MINUTE;
      await store.saveCode(codeRecord('grant-b', { expiresAt: BASE_TIME + HOUR }));
      await vi.waitFor(async () => expect(await countRows('oauth_grants')).toBe(1), { timeout: 2000, interval: 20 });
    });

    it("deletes a client of many users' grants and consents in round trips, each told to the call, and no other client's", async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      const [big, other] = [clientRecord(), clientRecord()];
      await store.saveClient(big);
      await store.saveClient(other);
      // 25,000 users of `big` (two and a half chunks), as many rows as a real sign-in leaves, and one of `other`.
      await pool.query(
        `INSERT INTO "${schema}".oauth_grants (grant_id, client_id, sub, record, code_hash, code_expires_at, expires_at)
          SELECT 'g' || i, CASE WHEN i = 0 THEN $2 ELSE $1 END, 'user-' || i, '{}', 'h', now(), now() + interval '1 day' FROM generate_series(0, 25000) i`,
        [big.id, other.id],
      );
      await pool.query(`INSERT INTO "${schema}".oauth_consents SELECT 'user-' || i, CASE WHEN i = 0 THEN $2 ELSE $1 END, '{openid}' FROM generate_series(0, 25000) i`, [big.id, other.id]);
      let answered = 0;
      const call = { waiting() {}, sent() {}, answered: () => answered++, failing: false };
      expect(await store.deleteClient(big.id, call)).toBe(true);
      // Three chunks of grants, three of consents.
      expect(answered).toBe(6);
      expect([await countRows('oauth_grants'), await countRows('oauth_consents')]).toEqual([1, 1]);
      expect(await store.getClient(other.id)).toStrictEqual(other);
    });

    it("deletes every grant and consent of a client while another transaction deletes some of them (a user's revocation)", async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      const big = clientRecord();
      await store.saveClient(big);
      await pool.query(
        `INSERT INTO "${schema}".oauth_grants (grant_id, client_id, sub, record, code_hash, code_expires_at, expires_at)
          SELECT 'g' || i, $1, 'user-' || i, '{}', 'h', now(), now() + interval '1 day' FROM generate_series(1, 25000) i`,
        [big.id],
      );
      await pool.query(`INSERT INTO "${schema}".oauth_consents SELECT 'user-' || i, $1, '{openid}' FROM generate_series(1, 25000) i`, [big.id]);
      // 11,111 users' rows locked by a transaction that deletes them and commits while the chunks wait for them.
      const other = await pool.connect();
      try {
        await other.query('BEGIN');
        await other.query(`DELETE FROM "${schema}".oauth_grants WHERE client_id = $1 AND sub LIKE 'user-1%'`, [big.id]);
        await other.query(`DELETE FROM "${schema}".oauth_consents WHERE client_id = $1 AND sub LIKE 'user-1%'`, [big.id]);
        const deleting = store.deleteClient(big.id);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query('COMMIT');
        expect(await deleting).toBe(true);
      } finally {
        other.release();
      }
      expect([await countRows('oauth_grants'), await countRows('oauth_consents'), await countRows('oauth_clients')]).toEqual([0, 0, 0]);
    });

    it("deletes a client while its users' grants are revoked at the same moment, neither failing on a deadlock", async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      const client = clientRecord();
      await store.saveClient(client);
      // Two users with many grants each, their rows interleaved: the client's deletion and each
      // user's revocation lock the same rows, and would deadlock locking them in different orders.
      for (let round = 0; round < 8; round++) {
        await pool.query(
          `INSERT INTO "${schema}".oauth_grants (grant_id, client_id, sub, record, code_hash, code_expires_at, expires_at)
            SELECT 'g' || $2 || '-' || i, $1, 'user-' || (i % 2), '{}', 'h', now(), now() + interval '1 day' FROM generate_series(1, 600) i`,
          [client.id, round],
        );
        const outcomes = await Promise.allSettled([store.deleteClient(client.id), store.revokeUserGrants('user-0', client.id), store.revokeUserGrants('user-1', client.id)]);
        expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
        expect(await countRows('oauth_grants')).toBe(0);
        await store.saveClient(client);
      }
    });

    it('works on a bare queryable without connect()', async () => {
      const bare: PgQueryable = { query: (text, values) => pool.query(text, values) };
      const store = createPostgresOAuthStore({ pool: bare, schema, now: clock.read });
      const code = codeRecord('grant-bare');
      await store.saveCode(code);
      expect(await store.consumeCode(code.ref)).toBe(true);
      expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: true });
    });
  });
});
