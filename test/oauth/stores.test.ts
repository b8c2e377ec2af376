/**
 * Runs the OAuthStore conformance suite against memory, Redis and PostgreSQL, then checks what
 * only one backend can get wrong: memory growth, Redis TTLs, hash tags and round trips, and the
 * PostgreSQL migration and clean-up.
 */
import { Redis, type Cluster } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  createMemoryOAuthStore,
  createPostgresOAuthStore,
  createRedisOAuthStore,
  type PgQueryable,
  type RedisLike,
} from '../../src/oauth/store/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { BASE_TIME, codeRecord, describeOAuthStoreConformance, refreshRecord, tokenRecord } from './store-conformance.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A clock the test moves by hand. */
function testClock() {
  const clock = { now: BASE_TIME, read: () => clock.now };
  return clock;
}

// ---------------------------------------------------------------------------------------------
// memory

describeOAuthStoreConformance({
  name: 'memory',
  create: async (now) => ({ store: createMemoryOAuthStore({ now }), cleanup: async () => {} }),
});

describe('memory OAuthStore', () => {
  it('sweeps expired records out of its maps every so many writes, so memory stays bounded', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read, sweepEvery: 10 });
    for (let i = 0; i < 50; i += 1) {
      const grantId = `grant-${i}`;
      await store.saveCode(codeRecord(grantId, { expiresAt: BASE_TIME + MINUTE }));
      await store.saveTokens({ access: tokenRecord(grantId, { expiresAt: BASE_TIME + MINUTE }) });
    }
    expect(store.size).toBe(100);

    clock.now = BASE_TIME + 2 * MINUTE;
    // The next sweep comes at the latest after as many writes as the last sweep left records.
    for (let i = 0; i < 110; i += 1) await store.saveCode(codeRecord('live-grant', { expiresAt: BASE_TIME + HOUR }));
    expect(store.size).toBe(110);
  });

  it('deleteExpired drops expired codes, tokens and lapsed revocations at once', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read });
    await store.saveCode(codeRecord('grant-a'));
    await store.saveTokens({ access: tokenRecord('grant-b'), refresh: refreshRecord('grant-b') });
    await store.revokeGrant('grant-c', BASE_TIME + HOUR);
    expect(store.size).toBe(4);

    clock.now = BASE_TIME + 2 * HOUR;
    expect(await store.deleteExpired()).toBe(3);
    expect(store.size).toBe(1);
    clock.now = BASE_TIME + 25 * HOUR;
    expect(await store.deleteExpired()).toBe(1);
    expect(store.size).toBe(0);
  });

  it('findAccessTokenSync (the quota guard\'s path) answers exactly as findAccessToken: live, expired, revoked, unknown', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read });
    const access = tokenRecord('grant-a', { expiresAt: BASE_TIME + MINUTE });
    await store.saveTokens({ access });
    const refs = [access.ref, { grantId: 'grant-a', hash: 'another-hash' }, { grantId: 'grant-z', hash: access.ref.hash }];
    for (const ref of refs) expect(store.findAccessTokenSync(ref)).toStrictEqual(await store.findAccessToken(ref));
    expect(store.findAccessTokenSync(access.ref)).toStrictEqual(access);

    clock.now = access.expiresAt;
    expect(store.findAccessTokenSync(access.ref)).toBeUndefined();
    clock.now = BASE_TIME;
    await store.revokeGrant('grant-a', BASE_TIME + HOUR);
    expect(store.findAccessTokenSync(access.ref)).toBeUndefined();
  });

  it('starts with the clients given in its options', async () => {
    const client = { id: 'seeded', name: 'Seeded', redirectUris: ['https://a.example/cb'], scopes: ['openid'], grants: ['authorization_code' as const] };
    const store = createMemoryOAuthStore({ clients: [client] });
    expect(await store.getClient('seeded')).toStrictEqual(client);
  });

  it('refuses a malformed client in its options when it is created, naming the field', () => {
    const client = { id: 'seeded', name: 'Seeded', redirectUris: ['not a url'], scopes: ['openid'], grants: ['authorization_code' as const] };
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

async function scanKeys(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
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

    it('gives every grant key a TTL and its grant hash tag; clients and consents never expire', async () => {
      const store = createRedisOAuthStore({ client, prefix, now: clock.read });
      try {
        const grant = 'grant:{odd}';
        await store.saveCode(codeRecord(grant));
        await store.saveTokens({ access: tokenRecord(grant), refresh: refreshRecord(grant) });
        await store.revokeGrant('grant-revoked', BASE_TIME + HOUR);
        await store.saveClient({ id: 'c1', name: 'C', redirectUris: ['https://app.example/cb'], scopes: ['openid'], grants: ['authorization_code'] });
        await store.saveConsent('sub', 'c1', ['openid']);

        const keys = await scanKeys(client, prefix);
        // code, at, rt, tokens set / revoked marker / client / consent
        expect(keys).toHaveLength(7);
        for (const key of keys) {
          const ttl = await client.pttl(key);
          if (key.startsWith(`${prefix}client:`) || key.startsWith(`${prefix}consent:`)) {
            expect(ttl, key).toBe(-1);
            continue;
          }
          expect(ttl, key).toBeGreaterThan(0);
          expect(ttl, key).toBeLessThanOrEqual(24 * HOUR);
          const tag = hashTag(key);
          expect([encodeURIComponent(grant), 'grant-revoked'], key).toContain(tag);
        }
        // The four keys of the grant share one tag, hence one Cluster slot.
        expect(keys.filter((key) => hashTag(key) === encodeURIComponent(grant))).toHaveLength(4);
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it('sets each TTL from the injected clock, not from the server clock', async () => {
      const store = createRedisOAuthStore({ client, prefix, now: clock.read });
      try {
        // The injected clock is far from the real one; the TTL must still be expiresAt - now.
        const code = codeRecord('grant-ttl', { expiresAt: BASE_TIME + 10 * MINUTE });
        await store.saveCode(code);
        const [key] = await scanKeys(client, prefix);
        const ttl = await client.pttl(key!);
        expect(ttl).toBeGreaterThan(9 * MINUTE);
        expect(ttl).toBeLessThanOrEqual(10 * MINUTE);
      } finally {
        await deleteKeys(client, prefix);
      }
    });

    it('answers findAccessToken with a single GET', async () => {
      const { client: counted, calls } = recording(client);
      const store = createRedisOAuthStore({ client: counted, prefix, now: clock.read });
      try {
        const access = tokenRecord('grant-one-trip');
        await store.saveTokens({ access, refresh: refreshRecord('grant-one-trip') });
        calls.length = 0;
        expect(await store.findAccessToken(access.ref)).toStrictEqual(access);
        expect(calls).toEqual(['get']);
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
        expect(calls).toEqual(['evalsha', 'eval']);
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
    create: async (now) => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
      const schema = uniqueName('oauth');
      return {
        store: createPostgresOAuthStore({ pool, schema, now }),
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
        expect(rows.map((row) => row.table_name)).toEqual([
          'oauth_clients',
          'oauth_codes',
          'oauth_consents',
          'oauth_grants',
          'oauth_tokens',
        ]);
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

    it('deleteExpired removes expired rows, keeps live ones and answers the count', async () => {
      const store = createPostgresOAuthStore({ pool, schema, now: clock.read });
      try {
        await store.saveCode(codeRecord('grant-a', { expiresAt: BASE_TIME + MINUTE }));
        await store.saveCode(codeRecord('grant-b', { expiresAt: BASE_TIME + 10 * HOUR }));
        await store.saveTokens({
          access: tokenRecord('grant-c', { expiresAt: BASE_TIME + MINUTE }),
          refresh: refreshRecord('grant-c', { expiresAt: BASE_TIME + 2 * MINUTE }),
        });
        clock.now = BASE_TIME + 5 * MINUTE;
        // one code, two tokens and the grant row of grant-c
        expect(await store.deleteExpired()).toBe(4);
        expect(await countRows('oauth_codes')).toBe(1);
        expect(await countRows('oauth_tokens')).toBe(0);
        expect(await countRows('oauth_grants')).toBe(0);
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
        await vi.waitFor(async () => expect(await countRows('oauth_codes')).toBe(1), { timeout: 2000, interval: 20 });
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
