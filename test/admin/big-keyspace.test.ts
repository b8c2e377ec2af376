/**
 * The admin API on a Redis that holds many keys besides the platform's (docs/stores.md#deadlines-and-outages):
 * listing an application's usage, resetting it and deleting a client walk the whole keyspace with
 * SCAN, hundreds of round trips. Each answered within the deadline, such a call is load however
 * long it takes in all: it answers, and no outage starts for the guard's calls.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { createRedisQuotaStore } from '../../src/quota/index.js';
import { capturingLogger } from '../support/logger.js';
import { describeRedis, dropPrefix, redisUrl, uniqueName } from '../support/services.js';
import { accessToken, closeHosts, CONFIDENTIAL, PING, ping, startHost } from '../http/quota-helpers.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
/** Each store call's deadline; a call no round trip of which answers for twice this fails. */
const DEADLINE_MS = 100;
/** Keys of "the host's" beside the platform's: SCAN takes about 1 µs a key, several deadlines for these. */
const FILLER = 500_000;
const BATCH = 10_000;
/** Sets, or deletes, KEYS[1]..i for i from ARGV[1] to ARGV[2]: batches of 10,000 keep the server free for other tests. */
const SET_MANY = "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('SET', KEYS[1] .. i, '1') end return 0";
const DEL_MANY = "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('DEL', KEYS[1] .. i) end return 0";

/**
 * A logical database of its own: other test files' clean-ups (KEYS) walk theirs, not these keys,
 * and the SCANs here walk these keys only.
 */
const DATABASE = 9;

describeRedis('admin API on a Redis of many keys', () => {
  const client = new Redis(redisUrl!, { db: DATABASE });
  const prefix = uniqueName('big_keyspace');
  const filler = `${prefix}:host:`;
  const eachBatch = async (script: string) => {
    for (let from = 0; from < FILLER; from += BATCH) await client.eval(script, 1, filler, from, from + BATCH - 1);
  };

  beforeAll(() => eachBatch(SET_MANY), 60_000);
  afterEach(closeHosts);
  afterAll(async () => {
    await eachBatch(DEL_MANY);
    await dropPrefix(client, prefix);
  }, 60_000);

  it('lists and resets an application\'s usage and deletes a client, each walking the keyspace longer than twice the deadline, with no outage', async () => {
    const logger = capturingLogger();
    const host = await startHost('express', {
      logger,
      quota: { store: createRedisQuotaStore({ client, prefix: `${prefix}:quota` }), storeTimeoutMs: DEADLINE_MS },
      oauth: { store: createRedisOAuthStore({ client, prefix: `${prefix}:oauth:` }), storeTimeoutMs: DEADLINE_MS },
      platform: { admin: { token: TOKEN } },
    });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).status).toBe(200);

    let started = performance.now();
    const listed = await host.http().get(`/admin/usage?client_id=${CONFIDENTIAL.id}`).set(OPERATOR);
    // Longer than a call may stay silent: without the round trips counted, this listing fails.
    expect(performance.now() - started).toBeGreaterThan(2 * DEADLINE_MS);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.endpoints.map((e: { api_path: string }) => e.api_path)).toEqual([PING]);

    const reset = await host.http().delete(`/admin/usage?client_id=${CONFIDENTIAL.id}`).set(OPERATOR);
    expect([reset.status, reset.body.data.endpoints]).toEqual([200, 1]);

    const registered = await host.http().post('/admin/clients').set(OPERATOR).send({ name: 'Gone soon', redirectUris: ['http://127.0.0.1:9/cb'] });
    expect(registered.status, registered.text).toBe(201);
    started = performance.now();
    const deleted = await host.http().delete(`/admin/clients/${registered.body.data.client.id}`).set(OPERATOR);
    expect(performance.now() - started).toBeGreaterThan(2 * DEADLINE_MS);
    expect(deleted.status, deleted.text).toBe(200);

    expect(logger.records.map((r) => r.message).filter((message) => /store/.test(message))).toEqual([]);
    expect((await ping(host, token)).status).toBe(200);
  }, 60_000);
});
