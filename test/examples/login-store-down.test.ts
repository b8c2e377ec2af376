/**
 * The example's login page when its throttle cannot count (docs/oauth.md, "Brute-force limits"):
 * no password is checked uncounted; the visitor gets a 503 page with Retry-After, never an error
 * page with a 500.
 */
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { createMemoryQuotaStore, createRedisOAuthStore } from '../../src/index.js';
import { createMemorySessionStore } from '../../examples/session-store.js';
import { describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { signIn, STACK_TRACE, startExample, Visitor, type RunningExample } from './support.js';

describeRedis('the example login page with its store away', () => {
  let example: RunningExample | undefined;
  // Fails at once while disconnected, as the example's own Redis client does (examples/stores.ts).
  const redis = new Redis(redisUrl!, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  afterAll(async () => {
    await example?.close();
    redis.disconnect();
  });

  it('answers 503 with Retry-After and signs nobody in', async () => {
    const store = createRedisOAuthStore({ client: redis, prefix: `${uniqueName('login_down')}:` });
    example = await startExample({}, { oauth: store, quota: createMemoryQuotaStore(), sessions: createMemorySessionStore(), close: async () => {} });
    redis.disconnect();

    const page = await signIn(new Visitor(example.base));
    expect(page.status, page.text.slice(0, 300)).toBe(503);
    expect(page.headers.get('retry-after')).toBe('1');
    expect(page.text).toContain('try again');
    expect(page.text).not.toMatch(STACK_TRACE);
  });
});
