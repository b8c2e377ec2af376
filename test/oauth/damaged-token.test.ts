/**
 * An access token whose grant record is damaged in a Redis OAuth store (docs/stores.md#deadlines-and-outages):
 * the key replaced by another type (WRONGTYPE), or its record not JSON or not an object. The store answered: the
 * token check finds no token (401 invalid_token, so the application asks for a new one), no
 * outage is logged, and other applications' tokens keep working.
 */
import { afterEach, expect, it } from 'vitest';
import { createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { capturingLogger } from '../support/logger.js';
import { describeRedis, redisForBlock } from '../support/services.js';
import { accessToken, closeHosts, CONFIDENTIAL, OTHER, ping, startHost } from '../http/quota-helpers.js';

describeRedis('an access token whose grant record is damaged in a Redis OAuth store', () => {
  const { client, prefix } = redisForBlock('damaged_token');
  afterEach(closeHosts);

  it.each([
    ['a key of another type (WRONGTYPE)', async (key: string) => void (await client.del(key), await client.set(key, 'x'))],
    ['a record that is not JSON', async (key: string) => void (await client.hset(key, 'record', '{"clientId":'))],
    ['a record that is JSON null', async (key: string) => void (await client.hset(key, 'record', 'null'))],
  ])('%s: 401 invalid_token for that token, no outage, other tokens work', async (_name, damage) => {
    const logger = capturingLogger();
    const own = `${prefix}:${Math.random().toString(36).slice(2)}:`;
    const h = await startHost('express', { logger, quota: {}, oauth: { store: createRedisOAuthStore({ client, prefix: own }) } });
    const damaged = (await accessToken(h, CONFIDENTIAL)).token;
    const grants = await client.keys(`${own}*:grant`);
    expect(grants).toHaveLength(1);
    await damage(grants[0]!);
    const other = (await accessToken(h, OTHER)).token;

    for (let i = 0; i < 3; i++) {
      const res = await ping(h, damaged);
      expect([res.status, res.headers['www-authenticate']]).toEqual([401, expect.stringContaining('error="invalid_token"')]);
      expect((await ping(h, other)).status).toBe(200);
    }
    expect(logger.records.filter((r) => /unavailable/.test(r.message))).toEqual([]);
  });
});
