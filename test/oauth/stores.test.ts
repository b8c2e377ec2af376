/**
 * Runs the OAuthStore conformance suite against memory, Redis and PostgreSQL, then checks what
 * only one backend can get wrong: memory growth, Redis TTLs, hash tags, round trips and the pair
 * index, and the PostgreSQL statements, migration and clean-up.
 */
import { Redis, type Cluster } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  createMemoryOAuthStore,
  createPostgresOAuthStore,
  createRedisOAuthStore,
  type OAuthStore,
  type PgQueryable,
  type RedisLike,
} from '../../src/oauth/store/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { accessView, BASE_TIME, codeRecord, describeOAuthStoreConformance, issueGrant, nextTokens } from './store-conformance.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A clock the test moves by hand. */
function testClock() {
  const clock = { now: BASE_TIME, read: () => clock.now };
  return clock;
}

/** Starts a grant and performs one refresh the way the token endpoint does: read the token, then rotate. */
async function refreshOnce(store: OAuthStore, presented: { grantId: string; hash: string }) {
  const tokens = nextTokens(presented.grantId);
  expect((await store.findRefreshToken(presented))?.consumed).toBe(false);
  return { tokens, outcome: await store.rotateRefreshToken(presented, tokens) };
}

// ---------------------------------------------------------------------------------------------
// memory

describeOAuthStoreConformance({
  name: 'memory',
  create: async (now) => {
    const store = createMemoryOAuthStore({ now });
    return { store, footprint: async () => store.size, cleanup: async () => {} };
  },
});

describe('memory OAuthStore', () => {
  it('sweeps expired grants every so many new grants, so memory stays bounded by the live ones', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read, sweepEvery: 10 });
    for (let i = 0; i < 50; i += 1) await store.saveCode(codeRecord(`grant-${i}`, { expiresAt: BASE_TIME + MINUTE }));
    expect(store.size).toBe(50);

    clock.now = BASE_TIME + 2 * MINUTE;
    // The next sweep comes at the latest after as many new grants as the last sweep left.
    for (let i = 0; i < 40; i += 1) await store.saveCode(codeRecord(`live-${i}`, { expiresAt: BASE_TIME + HOUR }));
    expect(store.size).toBe(40);
  });

  it('deleteExpired drops a grant once its last part expired', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read });
    await store.saveCode(codeRecord('grant-a'));
    await issueGrant(store, { grantId: 'grant-b', access: { expiresAt: BASE_TIME + HOUR }, refresh: { expiresAt: BASE_TIME + 24 * HOUR } });
    expect(store.size).toBe(2);

    clock.now = BASE_TIME + 2 * HOUR;
    expect(await store.deleteExpired()).toBe(1);
    expect(store.size).toBe(1);
    clock.now = BASE_TIME + 25 * HOUR;
    expect(await store.deleteExpired()).toBe(1);
    expect(store.size).toBe(0);
  });

  it('findAccessTokenSync (the quota guard\'s path) answers exactly as findAccessToken, with one frozen record: live, expired, retired, revoked, unknown', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read });
    const { code, access, refresh } = await issueGrant(store, { grantId: 'grant-a', access: { expiresAt: BASE_TIME + MINUTE } });
    const refs = [access.ref, { grantId: 'grant-a', hash: 'another-hash' }, { grantId: 'grant-z', hash: access.ref.hash }];
    for (const ref of refs) expect(store.findAccessTokenSync(ref)).toStrictEqual(await store.findAccessToken(ref));
    expect(store.findAccessTokenSync(access.ref)).toStrictEqual(accessView(code, access));
    expect(store.findAccessTokenSync(access.ref)).toBe(store.findAccessTokenSync(access.ref));
    expect(Object.isFrozen(store.findAccessTokenSync(access.ref)?.user?.claims)).toBe(true);

    clock.now = access.expiresAt;
    expect(store.findAccessTokenSync(access.ref)).toBeUndefined();
    clock.now = BASE_TIME;
    const first = await refreshOnce(store, refresh!.ref);
    await refreshOnce(store, first.tokens.refresh.ref);
    expect(store.findAccessTokenSync(access.ref)).toBeUndefined();
    expect(store.findAccessTokenSync(first.tokens.access.ref)).toStrictEqual(accessView(code, first.tokens.access));
    await store.revokeGrant('grant-a');
    expect(store.findAccessTokenSync(first.tokens.access.ref)).toBeUndefined();
  });

  it('starts with the clients given in its options', async () => {
    const client = { id: 'preloaded', name: 'Preloaded', redirectUris: ['https://a.example/cb'], scopes: ['openid'], grants: ['authorization_code' as const] };
    const store = createMemoryOAuthStore({ clients: [client] });
    expect(await store.getClient('preloaded')).toStrictEqual(client);
  });

  it('refuses a malformed client in its options when it is created, naming the field', () => {
    const client = { id: 'preloaded-bad', name: 'Preloaded', redirectUris: ['not a url'], scopes: ['openid'], grants: ['authorization_code' as const] };
    expect(() => createMemoryOAuthStore({ clients: [client] })).toThrow(/redirectUris\[0\]: must be an absolute http\(s\) URL/);
  });

  it('rejects a sweep interval that is not a positive integer', () => {
    expect(() => createMemoryOAuthStore({ sweepEvery: 0 })).toThrow(TypeError);
  });
});

// ---------------------------------------------------------------------------------------------
// Redis

/** Deletes every key under a prefix (SCAN, never KEYS: the server is shared). */
async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  for (const key of await scanKeys(client, prefix)) await client.del(key);
}

async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${pattern}*`, 'COUNT', 500);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** Keys under the grant's hash tag, plus the fields of those that are hashes. */
async function redisFootprint(client: Redis, prefix: string, grantId: string): Promise<number> {
  let count = 0;
  for (const key of await scanKeys(client, `${prefix}{${encodeURIComponent(grantId)}}`)) {
    count += 1 + ((await client.type(key)) === 'hash' ? await client.hlen(key) : 0);
  }
  return count;
}

/** The part of a key Redis Cluster hashes: the text of the first non-empty `{...}`, else the key. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** Wraps a client so every command method called on it is recorded (no MONITOR needed). */
function recording(client: RedisLike, fail?: (method: string) => Error | undefined) {
  const calls: string[] = [];
  const proxy = new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        const error = fail?.(String(property));
        return error ? Promise.reject(error) : (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client: proxy, calls };
}

describeRedis('Redis OAuthStore', () => {
  describeOAuthStoreConformance({
    name: 'Redis',
    create: async (now) => {
      const client = new Redis(redisUrl!);
      const prefix = `${uniqueName('oauth')}:`;
      return {
        store: createRedisOAuthStore({ client, prefix, now }),
        footprint: (grantId) => redisFootprint(client, prefix, grantId),
        cleanup: async () => {
          await deleteKeys(client, prefix);
          await client.quit();
        },
      };
    },
  });

  describe('Redis specifics', () => {
    let client: Redis;
    let prefix: string;
    const clock = testClock();

    beforeAll(() => {
      client = new Redis(redisUrl!);
    });
    beforeEach(() => {
      prefix = `${uniqueName('oauth')}:`;
      clock.now = BASE_TIME;
    });
    afterAll(async () => {
      await client.quit();
    });

    it('accepts an ioredis Redis or Cluster as its client', () => {
      expectTypeOf<Redis>().toExtend<RedisLike>();
      expectTypeOf<Cluster>().toExtend<RedisLike>();
    });

    it('keeps a grant in one key under its hash tag, with a TTL; the pair index, clients and consents never expire', async () => {
      const store = createRedisOAuthStore({ client, prefix, now: clock.read });
      try {
        const grantId = 'grant:{odd}';
        const { refresh } = await issueGrant(store, { grantId });
        await refreshOnce(store, refresh!.ref);
        await store.saveClient({ id: 'c1', name: 'C', redirectUris: ['https://app.example/cb'], scopes: ['openid'], grants: ['authorization_code'] });
        await store.saveConsent('sub', 'c1', ['openid']);

        const keys = await scanKeys(client, prefix);
        // the grant / its pair's index / client / consent
        expect(keys).toHaveLength(4);
        const tagged = keys.filter((key) => hashTag(key) === encodeURIComponent(grantId));
        expect(tagged).toHaveLength(1);
        const ttl = await client.pttl(tagged[0]!);
        expect(ttl).toBeGreaterThan(23 * HOUR);
        expect(ttl).toBeLessThanOrEqual(24 * HOUR);
        for (const key of keys.filter((key) => key !== tagged[0])) expect(await client.pttl(key), key).toBe(-1);
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it('sets each TTL from the injected clock, not from the server clock', async () => {
      const store = createRedisOAuthStore({ client, prefix, now: clock.read });
      try {
        // The injected clock is far from the real one; the TTL must still be expiresAt - now.
        await store.saveCode(codeRecord('grant-ttl', { expiresAt: BASE_TIME + 10 * MINUTE }));
        const ttl = await client.pttl(`${prefix}{grant-ttl}:grant`);
        expect(ttl).toBeGreaterThan(9 * MINUTE);
        expect(ttl).toBeLessThanOrEqual(10 * MINUTE);
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it('answers findAccessToken with a single HMGET, and a refresh with two round trips', async () => {
      const { client: counted, calls } = recording(client);
      const store = createRedisOAuthStore({ client: counted, prefix, now: clock.read });
      try {
        const { code, access, refresh } = await issueGrant(store);
        calls.length = 0;
        expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
        expect(calls).toEqual(['hmget']);

        calls.length = 0;
        expect((await refreshOnce(store, refresh!.ref)).outcome).toBe('rotated');
        expect(calls).toEqual(['hmget', 'evalsha']);
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it('leaves the grant as it was when the rotation call fails, so the same refresh token works again', async () => {
      let failRotation = false;
      const { client: flaky } = recording(client, (method) => {
        if (method !== 'evalsha' || !failRotation) return undefined;
        failRotation = false;
        return new Error('ECONNRESET');
      });
      const store = createRedisOAuthStore({ client: flaky, prefix, now: clock.read });
      try {
        const { code, access, refresh } = await issueGrant(store);
        failRotation = true;
        await expect(refreshOnce(store, refresh!.ref)).rejects.toThrow(/ECONNRESET/);
        expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
        const retry = await refreshOnce(store, refresh!.ref);
        expect(retry.outcome).toBe('rotated');
        expect(await store.findAccessToken(retry.tokens.access.ref)).toStrictEqual(accessView(code, retry.tokens.access));
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it("keeps a pair's grant index within its live grants, without timers", async () => {
      const store = createRedisOAuthStore({ client, prefix, now: clock.read });
      const index = `${prefix}grants:${encodeURIComponent('user-alice')}:client-1`;
      try {
        const ended = Array.from({ length: 40 }, (_, i) => codeRecord(`ended-${i}`));
        for (const code of ended) await store.saveCode(code);
        for (const code of ended) await store.revokeGrant(code.ref.grantId);
        expect(await client.zcard(index)).toBe(40);
        for (let i = 0; i < 40; i += 1) await store.saveCode(codeRecord(`live-${i}`));
        expect(await client.zcard(index)).toBe(40);
        expect((await client.zrange(index, 0, -1)).every((grantId) => grantId.startsWith('live-'))).toBe(true);

        await store.revokeUserGrants('user-alice', 'client-1');
        expect(await client.exists(index)).toBe(0);
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it('runs scripts by EVALSHA and falls back to EVAL when the server answers NOSCRIPT', async () => {
      let failNext = true;
      const { client: flaky, calls } = recording(client, (method) => {
        if (method !== 'evalsha' || !failNext) return undefined;
        failNext = false;
        return new Error('NOSCRIPT No matching script. Please use EVAL.');
      });
      const store = createRedisOAuthStore({ client: flaky, prefix, now: clock.read });
      try {
        const code = codeRecord('grant-noscript');
        await store.saveCode(code);
        // indexing the grant (refused, then EVAL), then saving it
        expect(calls).toEqual(['evalsha', 'eval', 'evalsha']);
        calls.length = 0;
        expect(await store.consumeCode(code.ref)).toBe(true);
        expect(calls).toEqual(['evalsha']);
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it('passes other script errors through', async () => {
      const { client: broken } = recording(client, (method) =>
        method === 'evalsha' ? new Error('READONLY You cannot write against a read only replica.') : undefined,
      );
      const store = createRedisOAuthStore({ client: broken, prefix, now: clock.read });
      await expect(store.saveCode(codeRecord('grant-readonly'))).rejects.toThrow(/READONLY/);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL

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
  describeOAuthStoreConformance({
    name: 'PostgreSQL',
    // Each refresh is one committed UPDATE, so the loop is bounded by commit latency.
    refreshes: 2_000,
    create: async (now) => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
      const schema = uniqueName('oauth');
      return {
        store: createPostgresOAuthStore({ pool, schema, now }),
        // The rows of the grant and their stored size.
        footprint: async (grantId) => {
          const { rows } = await pool.query<{ bytes: string }>(
            `SELECT coalesce(sum(pg_column_size(g.*)), 0) AS bytes FROM "${schema}".oauth_grants g WHERE grant_id = $1`,
            [grantId],
          );
          return Number(rows[0]!.bytes);
        },
        cleanup: async () => {
          await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await pool.end();
        },
      };
    },
  });

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
    afterAll(async () => {
      await pool.end();
    });

    const dropSchema = () => pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
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
      try {
        await Promise.all([first.migrate(), second.migrate(), first.migrate()]);
        await first.migrate();
        const { rows } = await pool.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
          [schema],
        );
        expect(rows.map((row) => row.table_name)).toEqual(['oauth_clients', 'oauth_consents', 'oauth_grants', 'oauth_rate_limits', 'oauth_used_once']);
      } finally {
        await dropSchema();
      }
    });

    it('creates its schema on first use unless told not to', async () => {
      try {
        const manual = createPostgresOAuthStore({ pool, schema, migrate: false });
        await expect(manual.getClient('x')).rejects.toThrow(/does not exist/);
        const automatic = createPostgresOAuthStore({ pool, schema });
        expect(await automatic.getClient('x')).toBeUndefined();
      } finally {
        await dropSchema();
      }
    });

    it('answers findAccessToken with one statement, and a refresh with two', async () => {
      const { queryable, counted } = countingPool();
      const store = createPostgresOAuthStore({ pool: queryable, schema, now: clock.read });
      try {
        const { code, access, refresh } = await issueGrant(store);
        counted.statements = 0;
        expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
        expect(counted.statements).toBe(1);

        counted.statements = 0;
        expect((await refreshOnce(store, refresh!.ref)).outcome).toBe('rotated');
        expect(counted.statements).toBe(2);
      } finally {
        await dropSchema();
      }
    });

    it('leaves the grant as it was when the rotation fails on the server, so the same refresh token works again', async () => {
      const { queryable, counted } = countingPool();
      const store = createPostgresOAuthStore({ pool: queryable, schema, now: clock.read });
      try {
        const { code, access, refresh } = await issueGrant(store);
        const tokens = nextTokens(code.ref.grantId);
        counted.corruptNext = true;
        await expect(store.rotateRefreshToken(refresh!.ref, tokens)).rejects.toThrow(/timestamp|time zone|date/i);
        expect(await store.findAccessToken(tokens.access.ref)).toBeUndefined();
        expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
        const retry = await refreshOnce(store, refresh!.ref);
        expect(retry.outcome).toBe('rotated');
        expect(await store.findAccessToken(retry.tokens.access.ref)).toStrictEqual(accessView(code, retry.tokens.access));
      } finally {
        await dropSchema();
      }
    });

    it('deleteExpired removes the rows of expired grants, keeps live ones and answers the count', async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      try {
        await store.saveCode(codeRecord('grant-a', { expiresAt: BASE_TIME + MINUTE }));
        await store.saveCode(codeRecord('grant-b', { expiresAt: BASE_TIME + 10 * HOUR }));
        await issueGrant(store, { grantId: 'grant-c', access: { expiresAt: BASE_TIME + MINUTE }, refresh: { expiresAt: BASE_TIME + 2 * MINUTE } });
        clock.now = BASE_TIME + 5 * MINUTE;
        expect(await store.deleteExpired()).toBe(2);
        expect(await countRows('oauth_grants')).toBe(1);
        expect(await store.deleteExpired()).toBe(0);
      } finally {
        await dropSchema();
      }
    });

    it('cleans up by itself after a write once a minute of its clock has passed', async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      try {
        await store.saveCode(codeRecord('grant-a', { expiresAt: BASE_TIME + MINUTE }));
        clock.now = BASE_TIME + 2 * MINUTE;
        await store.saveCode(codeRecord('grant-b', { expiresAt: BASE_TIME + HOUR }));
        await vi.waitFor(async () => expect(await countRows('oauth_grants')).toBe(1), { timeout: 2000, interval: 20 });
      } finally {
        await dropSchema();
      }
    });

    it('works on a bare queryable without connect()', async () => {
      const bare: PgQueryable = { query: (text, values) => pool.query(text, values) };
      const store = createPostgresOAuthStore({ pool: bare, schema, now: clock.read });
      try {
        const code = codeRecord('grant-bare');
        await store.saveCode(code);
        expect(await store.consumeCode(code.ref)).toBe(true);
        expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: true });
      } finally {
        await dropSchema();
      }
    });
  });
});
