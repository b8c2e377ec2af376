/**
 * The example's sign-in sessions on each store: they expire, sign-out deletes them, the store
 * never holds the cookie's value, and two example processes on one Redis or PostgreSQL agree
 * (sign in on one, sign out on the other: the old cookie signs in nowhere).
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresOAuthStore, createPostgresQuotaStore, createRedisOAuthStore, createRedisQuotaStore } from 'courier-platform';
import {
  createMemorySessionStore,
  createPostgresSessionStore,
  createRedisSessionStore,
  type SessionStore,
} from '../../examples/session-store.js';
import type { ExampleStores } from '../../examples/stores.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { Visitor, hiddenInput, signIn, startExample, type RunningExample } from './support.js';

const SESSION = { sub: 'demo-user-1', auth_time: 1_700_000_000 };
const ID = 'a-session-id-as-the-cookie-carries-it-0000000';

interface StoreUnderTest {
  store: SessionStore;
  /** Everything the store holds, keys and values, as text; the memory store cannot be listed. */
  contents?(): Promise<string>;
  cleanup(): Promise<void>;
}

/** What every session store does. */
function describeSessionStore(name: string, setup: () => Promise<StoreUnderTest>, listable: boolean) {
  describe(`${name} session store`, () => {
    let store: SessionStore;
    let contents: StoreUnderTest['contents'];
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ store, contents, cleanup } = await setup());
    });
    afterAll(() => cleanup?.());

    it('keeps a session until it is deleted', async () => {
      expect(await store.get(ID)).toBeUndefined();
      await store.set(ID, SESSION, 60);
      expect(await store.get(ID)).toEqual(SESSION);
      expect(await store.get(`${ID}x`)).toBeUndefined();
      await store.delete(ID);
      expect(await store.get(ID)).toBeUndefined();
    });

    it('forgets a session after its lifetime', async () => {
      await store.set(`${ID}-short`, SESSION, 1);
      expect(await store.get(`${ID}-short`)).toEqual(SESSION);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await store.get(`${ID}-short`)).toBeUndefined();
    });

    // The memory store cannot be listed from outside; the key derivation is the same for all three.
    if (listable) {
      it('holds a hash of the session id, never the id itself', async () => {
        await store.set(ID, SESSION, 60);
        const held = await contents!();
        expect(held).toContain('demo-user-1');
        expect(held).not.toContain(ID);
      });
    }
  });
}

describeSessionStore('memory', async () => ({ store: createMemorySessionStore(), cleanup: async () => {} }), false);

describeRedis('Redis', () => {
  describeSessionStore('Redis', async () => {
    const redis = new Redis(redisUrl!);
    const prefix = `${uniqueName('session')}:`;
    return {
      store: createRedisSessionStore(redis, prefix),
      async contents() {
        const keys = await redis.keys(`${prefix}*`);
        const values = await Promise.all(keys.map((key) => redis.get(key)));
        return [...keys, ...values].join('\n');
      },
      async cleanup() {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      },
    };
  }, true);
});

describePostgres('PostgreSQL', () => {
  describeSessionStore('PostgreSQL', async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl });
    const schema = uniqueName('session');
    await pool.query(`CREATE SCHEMA ${schema}`);
    return {
      store: createPostgresSessionStore(pool, `${schema}.sessions`),
      contents: async () => JSON.stringify((await pool.query(`SELECT * FROM ${schema}.sessions`)).rows),
      async cleanup() {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await pool.end();
      },
    };
  }, true);
});

/** Two example processes behind one PUBLIC_URL, each with its own connection to the shared stores. */
function describeTwoProcesses(name: string, connect: () => Promise<{ stores: () => ExampleStores; cleanup(): Promise<void> }>) {
  describe(`two example processes on one ${name}`, () => {
    let first: RunningExample;
    let second: RunningExample;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      const shared = await connect();
      cleanup = shared.cleanup;
      first = await startExample({}, shared.stores());
      second = await startExample({ PUBLIC_URL: first.base }, shared.stores());
    });
    afterAll(async () => {
      await Promise.all([first?.close(), second?.close()]);
      await cleanup?.();
    });

    it('share sign-in sessions, and a sign-out on one ends the session on both', async () => {
      const visitor = new Visitor(first.base);
      expect((await signIn(visitor)).status).toBe(303);
      const cookie = visitor.cookies.get('demo_session')!;
      const elsewhere = new Visitor(second.base);
      elsewhere.cookies.set('demo_session', cookie);
      const home = await elsewhere.open('/');
      expect(home.text).toContain('Signed in as Demo User');

      const out = await elsewhere.submit('/logout', { csrf: hiddenInput(home.text, 'csrf')! }, { origin: first.base });
      expect(out.status).toBe(303);

      const kept = new Visitor(first.base);
      kept.cookies.set('demo_session', cookie);
      expect((await kept.open('/')).text).toContain('Not signed in');
    });
  });
}

describeRedis('Redis', () => {
  describeTwoProcesses('Redis', async () => {
    const name = uniqueName('example');
    const clients: Redis[] = [];
    return {
      stores() {
        const redis = new Redis(redisUrl!);
        clients.push(redis);
        return {
          oauth: createRedisOAuthStore({ client: redis, prefix: `${name}:oauth:` }),
          quota: createRedisQuotaStore({ client: redis, prefix: `${name}:q` }),
          sessions: createRedisSessionStore(redis, `${name}:session:`),
          close: async () => void (await redis.quit()),
        };
      },
      async cleanup() {
        const redis = new Redis(redisUrl!);
        const keys = await redis.keys(`${name}:*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      },
    };
  });
});

describePostgres('PostgreSQL', () => {
  describeTwoProcesses('PostgreSQL', async () => {
    const schema = uniqueName('example');
    const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    return {
      stores() {
        const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
        return {
          oauth: createPostgresOAuthStore({ pool, schema }),
          quota: createPostgresQuotaStore({ pool, schema }),
          sessions: createPostgresSessionStore(pool, `${schema}.sessions`),
          close: () => pool.end(),
        };
      },
      async cleanup() {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      },
    };
  });
});
