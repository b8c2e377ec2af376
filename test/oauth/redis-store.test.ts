/**
 * What only the Redis OAuthStore can get wrong: TTLs, hash tags, round trips, the pair index and
 * its answers to a failing server. The conformance run is in stores.test.ts.
 */
import { Redis, type Cluster } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { createRedisOAuthStore, type RedisLike } from '../../src/oauth/store/index.js';
import { describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { accessView, BASE_TIME, codeRecord, HOUR, issueGrant, MINUTE } from './store-conformance.js';
import { deleteKeys, refreshOnce, scanKeys, testClock } from './store-helpers.js';

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
