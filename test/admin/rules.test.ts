/**
 * `{admin}/rules` (docs/operator.md#quota-rules): stored quota rules beside the configured ones,
 * on every adapter with the memory store, and on a Redis and a PostgreSQL store shared by two
 * processes, where the second enforces a change within its rule cache's 5 s.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { QuotaStore } from '../../src/quota/index.js';
import { accessToken, ADAPTER_NAMES, closeHosts, CONFIDENTIAL, OTHER, ORDERS, PING, ping, startHost, type QuotaHost } from '../http/quota-helpers.js';
import { capturingLogger } from '../support/logger.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { postgresQuotaStores, redisQuotaStores, type SharedQuotaStore } from './shared-quota-stores.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
const CONFIGURED = { scope: 'global' as const, apiPath: ORDERS, minute: 50 };

afterEach(closeHosts);

function host(adapter: (typeof ADAPTER_NAMES)[number], store?: QuotaStore): Promise<QuotaHost> {
  return startHost(adapter, { quota: { rules: [CONFIGURED], ...(store ? { store } : {}) }, platform: { admin: { token: TOKEN } } });
}

const rules = (h: QuotaHost) => ({
  list: () => h.http().get('/admin/rules').set(OPERATOR),
  put: (body: unknown) => h.http().put('/admin/rules').set(OPERATOR).send(body as object),
  remove: (query: Record<string, string>) => h.http().delete(`/admin/rules?${new URLSearchParams(query)}`).set(OPERATOR),
});

/** Pings until one is refused; answers how many were admitted (bounded). */
async function admittedPings(h: QuotaHost, token: string, max = 10): Promise<number> {
  for (let i = 0; i < max; i += 1) {
    const res = await ping(h, token);
    if (res.status === 429) return i;
    expect(res.status).toBe(200);
  }
  return max;
}

describe.each(ADAPTER_NAMES)('admin quota rules on %s', (adapter) => {
  it('a stored client rule applies at once in this process, is listed beside the configured ones, and its deletion lifts it', async () => {
    const h = await host(adapter);
    const { token } = await accessToken(h, CONFIDENTIAL);
    const saved = await rules(h).put({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: `${PING}/`, minute: 3 });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.data).toEqual({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 3, source: 'store' });

    expect(await admittedPings(h, token)).toBe(3);
    const other = await accessToken(h, OTHER);
    expect((await ping(h, other.token)).status).toBe(200);

    const list = await rules(h).list();
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      { ...CONFIGURED, source: 'options' },
      { scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 3, source: 'store' },
    ]);

    expect((await rules(h).remove({ scope: 'client', client_id: CONFIDENTIAL.id, api_path: PING })).status).toBe(200);
    // The defaults again: 60 a minute, 3 already used.
    expect((await ping(h, token)).status).toBe(200);
    expect((await rules(h).remove({ scope: 'client', client_id: CONFIDENTIAL.id, api_path: PING })).status).toBe(404);
  });

  it('refuses to change a configured rule (409), names the bad field (400), and wants the operator (401)', async () => {
    const h = await host(adapter);
    const conflict = await rules(h).put({ ...CONFIGURED, minute: 5 });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: expect.any(Number), data: null });
    expect((await rules(h).remove({ scope: 'global', api_path: ORDERS })).status).toBe(409);

    const bad = await rules(h).put({ scope: 'client', apiPath: PING, minute: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.data.errors.map((e: { field: string }) => e.field).sort()).toEqual(['clientId', 'minute']);
    const impossible = await rules(h).put({ scope: 'global', apiPath: PING, minute: 2, cost: 3 });
    expect(impossible.status).toBe(400);
    expect(impossible.body.data.errors[0].field).toBe('cost');
    // Beyond what every store's counters hold (docs/quota.md#rules), or a path the URL standard resolves.
    const huge = await rules(h).put({ scope: 'global', apiPath: '/openapi/v1/hugecost', cost: Number.MAX_SAFE_INTEGER, minute: 0, day: 0, month: 0 });
    expect([huge.status, huge.body.data.errors]).toEqual([400, [{ field: 'cost', rule: 'max', message: 'must be at most 1000' }]]);
    const limit = await rules(h).put({ scope: 'global', apiPath: '/openapi/v1/hugecost', month: 1e12 + 1 });
    expect([limit.status, limit.body.data.errors]).toEqual([400, [{ field: 'month', rule: 'max', message: 'must be at most 1000000000000' }]]);
    const dots = await rules(h).put({ scope: 'global', apiPath: '/openapi/v1/x/../dots', minute: 1 });
    expect([dots.status, dots.body.data.errors]).toEqual([400, [{ field: 'apiPath', rule: 'custom', message: expect.stringContaining('must not hold "." or ".." segments') }]]);
    const bounds = await rules(h).put({ scope: 'global', apiPath: '/openapi/v1/hugecost', cost: 1000, minute: 0, day: 0, month: 1e12 });
    expect([bounds.status, bounds.body.data.cost, bounds.body.data.month]).toEqual([200, 1000, 1e12]);

    // The query's parameters are named as sent.
    const noClient = await rules(h).remove({ scope: 'client', api_path: PING });
    expect([noClient.status, noClient.body.data.errors[0].field, noClient.body.message]).toEqual([400, 'client_id', 'Validation failed: client_id: a client rule needs a client_id']);
    const globalWithClient = await rules(h).remove({ scope: 'global', api_path: PING, client_id: CONFIDENTIAL.id });
    expect([globalWithClient.status, globalWithClient.body.data.errors[0].field]).toEqual([400, 'client_id']);
    expect((await rules(h).remove({ scope: 'global', api_path: 'no-slash' })).body.data.errors[0].field).toBe('api_path');
    expect((await rules(h).remove({ scope: 'client', api_path: PING, client_id: 'app\u0000x' })).body.data.errors[0]).toMatchObject({ field: 'client_id', message: 'must not contain control characters' });

    expect((await h.http().get('/admin/rules')).status).toBe(401);
    expect((await h.http().put('/admin/rules').send({ scope: 'global', apiPath: PING, minute: 1 })).status).toBe(401);
  });
});

describe.each(ADAPTER_NAMES)('admin quota rules and applications on %s', (adapter) => {
  it('refuses a client rule naming no application (400 naming clientId), and deletes the stored rules of a deleted application', async () => {
    const h = await host(adapter);
    const unknown = await rules(h).put({ scope: 'client', clientId: 'app_nobody', apiPath: PING, minute: 3 });
    expect([unknown.status, unknown.body.data.errors]).toEqual([400, [{ field: 'clientId', rule: 'known_client', message: expect.stringContaining('names no application') }]]);

    const registered = await h.http().post('/admin/clients').set(OPERATOR).send({ name: 'Partner', redirectUris: ['https://partner.example/cb'] });
    expect(registered.status).toBe(201);
    const id = registered.body.data.client.id as string;
    for (const apiPath of [PING, ORDERS]) expect((await rules(h).put({ scope: 'client', clientId: id, apiPath, minute: 3 })).status).toBe(200);
    expect((await rules(h).put({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 4 })).status).toBe(200);

    const deleted = await h.http().delete(`/admin/clients/${id}`).set(OPERATOR);
    expect(deleted.body.data).toEqual({ id, deleted: true, rules_deleted: 2 });
    const left = (await rules(h).list()).body.data as { clientId?: string }[];
    expect(left.filter((rule) => rule.clientId === id)).toEqual([]);
    expect(left).toContainEqual({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 4, source: 'store' });
  });
});

function twoProcesses(label: string, open: () => SharedQuotaStore) {
  describe(`admin quota rules on a shared ${label} store`, () => {
    let shared: SharedQuotaStore | undefined;
    afterAll(async () => shared?.close());

    it('a rule saved through one process is enforced by the other within 5 s, and its deletion too', async () => {
      const stores = (shared = open());
      const [one, two] = [await host('express', stores.store()), await host('express', stores.store())];
      const { token } = await accessToken(two, CONFIDENTIAL);
      expect((await ping(two, token)).status).toBe(200); // the rule cache of `two` now holds the defaults

      expect((await rules(one).put({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 2 })).status).toBe(200);
      expect((await rules(two).list()).body.data).toContainEqual({ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: 2, source: 'store' });
      two.clock.advance(5_001);
      // One admitted before, one more now, then the limit of 2.
      expect(await admittedPings(two, token)).toBe(1);

      expect((await rules(one).remove({ scope: 'client', client_id: CONFIDENTIAL.id, api_path: PING })).status).toBe(200);
      two.clock.advance(5_001);
      expect((await ping(two, token)).status).toBe(200);
    });

    it('a stored rule past the bounds (saved by another version) is not applied and not an outage: logged, listed, and mended with PUT', async () => {
      const stores = (shared ??= open());
      const logger = capturingLogger();
      const h = await startHost('express', { logger, quota: { store: stores.store() }, platform: { admin: { token: TOKEN } } });
      const outOfBounds = { scope: 'client' as const, clientId: OTHER.id, apiPath: PING, minute: 3, cost: 5000 };
      await stores.store().rules!.saveRule(outOfBounds);
      const { token } = await accessToken(h, OTHER);
      // Answered as when the rule source fails ('open': the insurance limiter, under the defaults).
      for (let i = 0; i < 4; i += 1) expect((await ping(h, token)).status).toBe(200);
      expect(logger.records.map((r) => `${r.level}: ${r.message}`).filter((line) => /rule|store/.test(line))).toEqual([
        expect.stringMatching(/^error: quota: invalid rule, .*client rule of "other-client".*cost: must be at most 1000/),
      ]);
      expect((await rules(h).list()).body.data).toContainEqual({ ...outOfBounds, source: 'store', invalid: 'cost: must be at most 1000' });

      expect((await rules(h).put({ ...outOfBounds, cost: 1 })).status).toBe(200);
      expect(await admittedPings(h, token)).toBe(3);
    });
  });
}

describeRedis('Redis', () => twoProcesses('Redis', () => redisQuotaStores('admin_rules')));
describePostgres('PostgreSQL', () => twoProcesses('PostgreSQL', () => postgresQuotaStores('admin_rules')));
