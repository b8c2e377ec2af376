/**
 * Records written into a Redis around the admin API, or damaged (docs/operator.md#quota-rules,
 * docs/operator.md#applications): a rule or a client record that is not JSON, JSON `null` or a
 * number, or filed under another key than it names. None is a store outage, a 500 or a 503: a
 * rule that is not one is not applied and is listed as invalid under its key; a client record
 * that is not one is no client, left out of the listing, and deleted by id. The rules hash
 * replaced by a key of another type is no outage either (docs/quota.md#damaged-data): the calls
 * go on under the rule last read, one warning names the key and its repair.
 */
import { afterEach, expect, it } from 'vitest';
import { createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { createRedisQuotaStore } from '../../src/quota/index.js';
import { ruleKey } from '../../src/quota/store/types.js';
import { capturingLogger } from '../support/logger.js';
import { describeRedis, redisForBlock } from '../support/services.js';
import { accessToken, closeHosts, CONFIDENTIAL, ORDER_ITEM, ORDERS, OTHER, PING, ping, startHost } from '../http/quota-helpers.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };

describeRedis('damaged records in a Redis store', () => {
  const { client, prefix } = redisForBlock('damaged');
  afterEach(closeHosts);

  const host = async () => {
    const logger = capturingLogger();
    const h = await startHost('express', {
      logger,
      quota: { store: createRedisQuotaStore({ client, prefix: `${prefix}:quota` }) },
      oauth: { store: createRedisOAuthStore({ client, prefix: `${prefix}:oauth:` }) },
      platform: { admin: { token: TOKEN } },
    });
    const outages = () => logger.records.filter((r) => /unavailable/.test(r.message)).map((r) => r.message);
    return { h, logger, outages };
  };

  it('a stored rule that is not JSON, or not an object, is not applied and starts no outage; the listing shows the rest and GET never fails', async () => {
    const { h, logger, outages } = await host();
    const rules = `${prefix}:quota:rules`;
    await client.hset(rules, ruleKey({ scope: 'global', apiPath: PING }), '{"scope":"global","apiPath":"/openapi/v1/pi');
    await client.hset(rules, ruleKey({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING }), '42');
    await client.hset(rules, ruleKey({ scope: 'global', apiPath: ORDER_ITEM }), 'null');
    await client.hset(rules, ruleKey({ scope: 'global', apiPath: ORDERS }), JSON.stringify({ scope: 'global', apiPath: ORDERS, minute: 10, cost: 5000 }));
    const { token } = await accessToken(h, CONFIDENTIAL);
    for (let i = 0; i < 3; i += 1) expect((await ping(h, token)).status).toBe(200);
    expect(outages()).toEqual([]);
    expect(logger.records.filter((r) => r.level === 'error').map((r) => r.message)).toEqual([expect.stringContaining(`invalid rule, rule source (client rule of "${CONFIDENTIAL.id}" for ${PING}): must be an object`)]);

    const listed = await h.http().get('/admin/rules').set(OPERATOR);
    expect(listed.status, listed.text).toBe(200);
    const stored = listed.body.data.filter((rule: { source: string }) => rule.source === 'store');
    expect(stored).toHaveLength(4);
    expect(stored).toEqual(
      expect.arrayContaining([
        { scope: 'global', apiPath: PING, source: 'store', invalid: 'must be an object' },
        { scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, source: 'store', invalid: 'must be an object' },
        { scope: 'global', apiPath: ORDER_ITEM, source: 'store', invalid: 'must be an object' },
        { scope: 'global', apiPath: ORDERS, minute: 10, cost: 5000, source: 'store', invalid: 'cost: must be at most 1000' },
      ]),
    );
    // Deleted by the key it is stored under, as any rule.
    const removed = await h.http().delete(`/admin/rules?${new URLSearchParams({ scope: 'global', api_path: PING })}`).set(OPERATOR);
    expect(removed.status, removed.text).toBe(200);

    // JSON null is a rule that is not one, refused like the others, not taken for no rule.
    expect((await ping(h, token, '/openapi/v1/orders/7')).status).toBe(200);
    expect(logger.records.filter((r) => r.level === 'error').map((r) => r.message)).toEqual([
      expect.stringContaining(`client rule of "${CONFIDENTIAL.id}" for ${PING}`),
      expect.stringContaining(`global rule for ${ORDER_ITEM}): must be an object`),
    ]);
    expect(outages()).toEqual([]);
  });

  it('an entry under another spelling of a rule key is neither applied nor listed', async () => {
    const { h } = await host();
    const rules = `${prefix}:quota:rules`;
    await client.del(rules);
    const spelt = JSON.stringify({ scope: 'global', apiPath: PING, minute: 1 });
    await client.hset(rules, '[ "global", "", "/openapi/v1/ping" ]', spelt, '["global","x","/openapi/v1/ping"]', spelt);
    const { token } = await accessToken(h, CONFIDENTIAL);
    expect([(await ping(h, token)).status, (await ping(h, token)).status]).toEqual([200, 200]);
    const listed = await h.http().get('/admin/rules').set(OPERATOR);
    expect(listed.body.data.filter((rule: { source: string }) => rule.source === 'store')).toEqual([]);
  });

  it('a stored rule filed under one application but naming another applies to neither: listed under its key as invalid, deleted by it', async () => {
    const { h, logger, outages } = await host();
    const rules = `${prefix}:quota:rules`;
    await client.del(rules);
    // Filed as OTHER's rule for PING, naming CONFIDENTIAL, one call a minute.
    await client.hset(rules, ruleKey({ scope: 'client', clientId: OTHER.id, apiPath: PING }), JSON.stringify({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 1 }));
    const [mine, theirs] = [(await accessToken(h, CONFIDENTIAL)).token, (await accessToken(h, OTHER)).token];
    for (let i = 0; i < 3; i += 1) expect([(await ping(h, mine)).status, (await ping(h, theirs)).status]).toEqual([200, 200]);
    expect(outages()).toEqual([]);
    expect(logger.records.filter((r) => r.level === 'error').map((r) => r.message)).toEqual([
      expect.stringContaining(`invalid rule, rule source (client rule of "${OTHER.id}" for ${PING}).clientId: names the client rule of "${CONFIDENTIAL.id}"`),
    ]);

    const listed = await h.http().get('/admin/rules').set(OPERATOR);
    expect(listed.body.data.filter((rule: { source: string }) => rule.source === 'store')).toEqual([
      { scope: 'client', clientId: OTHER.id, apiPath: PING, minute: 1, source: 'store', invalid: expect.stringMatching(/^clientId: names the client rule of "/) },
    ]);
    const removed = await h.http().delete(`/admin/rules?${new URLSearchParams({ scope: 'client', client_id: OTHER.id, api_path: PING })}`).set(OPERATOR);
    expect(removed.status, removed.text).toBe(200);
    expect(await client.hlen(rules)).toBe(0);
  });

  it('the rules hash replaced by a string is no outage: calls go on under the rule last read, one warning names the key, and saving the rules again repairs it', async () => {
    const logger = capturingLogger();
    const own = `${prefix}:replaced`;
    const h = await startHost('express', { logger, quota: { store: createRedisQuotaStore({ client, prefix: own }) }, platform: { admin: { token: TOKEN } } });
    const rule = { scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 3 };
    expect((await h.http().put('/admin/rules').set(OPERATOR).send(rule)).status).toBe(200);
    const [mine, theirs] = [(await accessToken(h, CONFIDENTIAL)).token, (await accessToken(h, OTHER)).token];
    expect((await ping(h, mine)).status).toBe(200);

    const rules = `${own}:rules`;
    await client.del(rules);
    await client.set(rules, 'not a hash');
    // Past the rule cache (5 s): every call asks the store for its rule again.
    h.clock.advance(5_001);
    const statuses = async (token: string, count: number) => {
      const all: number[] = [];
      for (let i = 0; i < count; i += 1) all.push((await ping(h, token)).status);
      return all;
    };
    // The insurance limit, under the rule last read (3 a minute), from the store's count (1).
    expect(await statuses(mine, 4)).toEqual([200, 200, 429, 429]);
    // An application whose rule was never read: the defaults (60 a minute).
    expect(await statuses(theirs, 5)).toEqual(Array(5).fill(200));

    expect(logger.records.filter((r) => /unavailable/.test(r.message))).toEqual([]);
    const metrics = await h.http().get('/admin/metrics').set(OPERATOR);
    expect(metrics.text).not.toMatch(/^courier_platform_store_errors_total\{store="quota store"\} [1-9]/m);
    const warnings = () => logger.records.filter((r) => r.level === 'warn' && r.message.startsWith('quota'));
    expect(warnings().map((r) => r.message)).toEqual([expect.stringContaining(`${rules} is not the hash of the stored rules (WRONGTYPE`)]);
    expect(warnings()[0]!.message).toContain('rename it to keep what it holds, or delete it, then save the rules again through the admin API');

    // The repair the warning names: the store decides again, under the rule saved anew.
    await client.del(rules);
    expect((await h.http().put('/admin/rules').set(OPERATOR).send(rule)).status).toBe(200);
    expect(await statuses(mine, 3)).toEqual([200, 200, 429]);
    expect(warnings()).toHaveLength(1);
  });

  it('a client record that is not JSON, or not a client, is no client: invalid_client, left out of the listing, deleted by id; no outage, no 500', async () => {
    const { h, outages } = await host();
    const clients = `${prefix}:oauth:clients`;
    await client.hset(clients, 'app_damaged000000001', '{"id":"app_damaged000000001","name":');
    await client.hset(clients, 'app_damaged000000002', 'null');
    // A whole record, filed under another id than its own.
    const registered = await h.http().post('/admin/clients').set(OPERATOR).send({ name: 'Filed elsewhere', redirectUris: ['http://127.0.0.1:9/cb'] });
    const own = registered.body.data.client.id as string;
    await client.hset(clients, 'app_damaged000000003', (await client.hget(clients, own))!);
    await client.hdel(clients, own);
    for (const id of ['app_damaged000000001', 'app_damaged000000002', 'app_damaged000000003']) {
      const token = await h.http().post('/oauth/token').type('form').auth(id, 'a-secret').send({ grant_type: 'client_credentials' });
      expect([token.status, token.body.error]).toEqual([401, 'invalid_client']);
      expect((await h.http().get(`/admin/clients/${id}`).set(OPERATOR)).status).toBe(404);
    }
    const listed = await h.http().get('/admin/clients').set(OPERATOR);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((c: { id: string }) => c.id).filter((id: string) => id.startsWith('app_damaged') || id === own)).toEqual([]);
    expect((await h.http().patch('/admin/clients/app_damaged000000003').set(OPERATOR).send({ name: 'x' })).status).toBe(404);
    for (const id of ['app_damaged000000001', 'app_damaged000000002', 'app_damaged000000003']) {
      const deleted = await h.http().delete(`/admin/clients/${id}`).set(OPERATOR);
      expect([deleted.status, deleted.body.data?.deleted]).toEqual([200, true]);
      expect(await client.hexists(clients, id)).toBe(0);
    }
    expect((await h.http().delete('/admin/clients/app_damaged000000001').set(OPERATOR)).status).toBe(404);
    expect(outages()).toEqual([]);
  });
});
