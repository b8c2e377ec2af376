/**
 * The example's shutdown (Ctrl-C, SIGTERM) lets the platform write the usage history it still
 * holds before the stores close (docs/operator.md#usage-history): a call made in the last
 * seconds before a restart is in the history after it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedisOAuthStore, createRedisQuotaStore } from '../../src/index.js';
import { scanKeys } from '../../src/core/redis-scan.js';
import { createMemorySessionStore } from '../../examples/session-store.js';
import type { ExampleStores } from '../../examples/stores.js';
import { describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { startExample } from './support.js';

const ADMIN_TOKEN = 'example-admin-token-0123456789abcdef';
const DEMO_BASIC = `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`;

describeRedis('the example on Redis, stopped and started again', () => {
  let redis: Redis;
  const prefix = uniqueName('shutdown');
  // The example closes its stores on shutdown; these share one client the test closes itself.
  const stores = (): ExampleStores => ({
    oauth: createRedisOAuthStore({ client: redis, prefix: `${prefix}:oauth:` }),
    quota: createRedisQuotaStore({ client: redis, prefix: `${prefix}:q` }),
    sessions: createMemorySessionStore(),
    close: async () => {},
  });

  beforeAll(() => {
    redis = new Redis(redisUrl!);
  });
  afterAll(async () => {
    const keys = [...(await scanKeys(redis, `${prefix}*`)), ...(await scanKeys(redis, `{${prefix}*`))];
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('keeps the guarded call made just before the shutdown in the usage history', async () => {
    const first = await startExample({}, stores());
    const token = await fetch(`${first.base}/oauth/token`, {
      method: 'POST',
      headers: { authorization: DEMO_BASIC, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    expect((await fetch(`${first.base}/openapi/v1/ping`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(200);
    // Well within the history's 5-second flush interval: only the shutdown writes this call.
    await first.close();

    const second = await startExample({ ADMIN_TOKEN }, stores());
    try {
      const query = new URLSearchParams({ client_id: 'demo-client', api_path: '/openapi/v1/ping' });
      const answer = await fetch(`${second.base}/admin/usage/history?${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const { data } = (await answer.json()) as { data: { series: { points: { admitted: number }[] }[] } };
      const admitted = data.series.flatMap((series) => series.points).reduce((sum, point) => sum + point.admitted, 0);
      expect(admitted).toBe(1);
    } finally {
      await second.close();
    }
  });
});
