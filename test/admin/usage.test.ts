/**
 * `{admin}/usage` (docs/operator.md#usage): every endpoint an application used in the current
 * periods, in get_quota's shape, and a reset, on every adapter with the memory store and on a
 * Redis and a PostgreSQL store shared by two processes.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { QuotaStore } from '../../src/quota/index.js';
import { accessToken, ADAPTER_NAMES, closeHosts, CONFIDENTIAL, OTHER, ORDERS, PING, ping, postOrder, startHost, usedOf, type QuotaHost } from '../http/quota-helpers.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { postgresQuotaStores, redisQuotaStores, type SharedQuotaStore } from './shared-quota-stores.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };

afterEach(closeHosts);

const host = (adapter: (typeof ADAPTER_NAMES)[number], store?: QuotaStore): Promise<QuotaHost> =>
  startHost(adapter, { quota: store ? { store } : {}, platform: { admin: { token: TOKEN } } });

const usage = (h: QuotaHost, query: Record<string, string>) => h.http().get(`/admin/usage?${new URLSearchParams(query)}`).set(OPERATOR);
const reset = (h: QuotaHost, query: Record<string, string>) => h.http().delete(`/admin/usage?${new URLSearchParams(query)}`).set(OPERATOR);

interface Endpoint {
  api_path: string;
  periods: { period: string; used: number; limit: number }[];
}
const usedBy = (res: { body: { data: { endpoints: Endpoint[] } } }) =>
  Object.fromEntries(res.body.data.endpoints.map((e) => [e.api_path, e.periods.map((p) => p.used)]));

describe.each(ADAPTER_NAMES)('admin usage on %s', (adapter) => {
  it("reads every endpoint an application used in get_quota's shape, and resets one endpoint or all", async () => {
    const h = await host(adapter);
    const { token } = await accessToken(h, CONFIDENTIAL);
    const other = await accessToken(h, OTHER);
    for (let i = 0; i < 2; i += 1) expect((await ping(h, token)).status).toBe(200);
    expect((await postOrder(h, token)).status).toBe(200);
    expect((await ping(h, other.token)).status).toBe(200);

    const read = await usage(h, { client_id: CONFIDENTIAL.id });
    expect(read.status, read.text).toBe(200);
    expect(read.body.data.client_id).toBe(CONFIDENTIAL.id);
    expect(usedBy(read)).toEqual({ [ORDERS]: [1, 1, 1], [PING]: [2, 2, 2] });
    // The same report get_quota gives the application itself.
    const own = (await h.http().get(`/openapi/v1/get_quota?api_path=${PING}`).set({ authorization: `Bearer ${token}` })).body.data;
    expect(read.body.data.endpoints.find((e: Endpoint) => e.api_path === PING)).toEqual(own);

    const one = await reset(h, { client_id: CONFIDENTIAL.id, api_path: PING });
    expect(one.body.data).toEqual({ client_id: CONFIDENTIAL.id, api_path: PING, endpoints: 1 });
    expect(await usedOf(h, token, PING)).toEqual([0, 0, 0]);
    expect(usedBy(await usage(h, { client_id: CONFIDENTIAL.id }))).toEqual({ [ORDERS]: [1, 1, 1] });

    expect((await reset(h, { client_id: CONFIDENTIAL.id })).body.data.endpoints).toBe(1);
    expect((await usage(h, { client_id: CONFIDENTIAL.id })).body.data.endpoints).toEqual([]);
    expect(usedBy(await usage(h, { client_id: OTHER.id }))).toEqual({ [PING]: [1, 1, 1] });
  });

  it('answers 404 for an application nobody registered, and an empty list for one that called nothing yet', async () => {
    const h = await host(adapter);
    const unknown = await usage(h, { client_id: 'app_nobody' });
    expect([unknown.status, unknown.body.code, unknown.body.data]).toEqual([404, 1, null]);
    expect(unknown.body.message).toContain('app_nobody');
    const idle = await usage(h, { client_id: OTHER.id });
    expect([idle.status, idle.body.data]).toEqual([200, { client_id: OTHER.id, endpoints: [] }]);
  });

  it('wants the operator (401) and a client_id (400 naming it)', async () => {
    const h = await host(adapter);
    expect((await h.http().get(`/admin/usage?client_id=${CONFIDENTIAL.id}`)).status).toBe(401);
    expect((await h.http().delete(`/admin/usage?client_id=${CONFIDENTIAL.id}`)).status).toBe(401);
    const missing = await usage(h, {});
    expect(missing.status).toBe(400);
    expect(missing.body.data.errors[0].field).toBe('client_id');
    // An empty id is one mistake, and the answer names it once.
    const empty = await usage(h, { client_id: '' });
    expect([empty.status, empty.body.data.errors]).toEqual([400, [expect.objectContaining({ field: 'client_id' })]]);
  });

  it('refuses an id with a control character (400 naming it) before any store sees it', async () => {
    const h = await host(adapter);
    for (const res of [await usage(h, { client_id: 'app\u0000x' }), await reset(h, { client_id: 'app\u001fx' })]) {
      expect([res.status, res.body.data.errors[0].field, res.body.data.errors[0].message]).toEqual([400, 'client_id', 'must not contain control characters']);
    }
    const grants = await h.http().delete(`/admin/grants?${new URLSearchParams({ client_id: CONFIDENTIAL.id, sub: 'a\u0000b' })}`).set(OPERATOR);
    expect([grants.status, grants.body.data.errors[0].field]).toEqual([400, 'sub']);
  });
});

function twoProcesses(label: string, open: () => SharedQuotaStore) {
  describe(`admin usage on a shared ${label} store`, () => {
    let shared: SharedQuotaStore | undefined;
    afterAll(async () => shared?.close());

    it("one process reads and resets what the application used through the other", async () => {
      const stores = (shared = open());
      const [one, two] = [await host('express', stores.store()), await host('express', stores.store())];
      const { token } = await accessToken(one, CONFIDENTIAL);
      for (let i = 0; i < 3; i += 1) expect((await ping(one, token)).status).toBe(200);
      expect(usedBy(await usage(two, { client_id: CONFIDENTIAL.id }))).toEqual({ [PING]: [3, 3, 3] });
      expect((await reset(two, { client_id: CONFIDENTIAL.id })).body.data.endpoints).toBe(1);
      expect(await usedOf(one, token, PING)).toEqual([0, 0, 0]);
    });
  });
}

describeRedis('Redis', () => twoProcesses('Redis', () => redisQuotaStores('admin_usage')));
describePostgres('PostgreSQL', () => twoProcesses('PostgreSQL', () => postgresQuotaStores('admin_usage')));
