/**
 * `{admin}/usage` (docs/operator.md#usage): the endpoints an application used in the current
 * periods, in get_quota's shape a page at a time in path order, and a reset, on every adapter
 * with the memory store and on a Redis and a PostgreSQL store shared by two processes.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createMemoryQuotaStore, createQuotaService, type QuotaStore } from '../../src/quota/index.js';
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

/** Endpoints a guard that names none makes of made-up paths (docs/quota.md): more than a page. */
const MANY = 150;
const madeUp = (i: number) => `/openapi/v1/made-up/${String(i).padStart(3, '0')}`;

/** One call of each made-up path by the application, last first: the store's order is not the answer's. */
async function callMany(h: QuotaHost, store: QuotaStore): Promise<string[]> {
  const quota = createQuotaService({ store, now: h.clock.now });
  for (let i = MANY - 1; i >= 0; i -= 1) expect((await quota.consume(CONFIDENTIAL.id, madeUp(i))).admitted).toBe(true);
  return Array.from({ length: MANY }, (_, i) => madeUp(i));
}

/** Two pages of 100 and 50 in path order, `next_cursor` beside `data`, then the limits and a bad cursor. */
async function pagesThrough(h: QuotaHost, paths: string[]): Promise<void> {
  const first = await usage(h, { client_id: CONFIDENTIAL.id });
  expect(first.status, first.text).toBe(200);
  expect(Object.keys(first.body).sort()).toEqual(['code', 'data', 'message', 'next_cursor']);
  expect(Object.keys(first.body.data).sort()).toEqual(['client_id', 'endpoints']);
  expect(first.body.data.client_id).toBe(CONFIDENTIAL.id);
  expect(first.body.data.endpoints.map((e: Endpoint) => e.api_path)).toEqual(paths.slice(0, 100));
  expect(Object.values(usedBy(first))).toEqual(Array.from({ length: 100 }, () => [1, 1, 1]));
  expect(first.body.next_cursor).toEqual(expect.any(String));

  const second = await usage(h, { client_id: CONFIDENTIAL.id, cursor: first.body.next_cursor });
  expect(second.status, second.text).toBe(200);
  expect(second.body.data.endpoints.map((e: Endpoint) => e.api_path)).toEqual(paths.slice(100));
  expect(second.body.next_cursor).toBeNull();

  const all = await usage(h, { client_id: CONFIDENTIAL.id, limit: String(MANY) });
  expect([all.body.data.endpoints.length, all.body.next_cursor]).toEqual([MANY, null]);
  const short = await usage(h, { client_id: CONFIDENTIAL.id, limit: String(MANY - 1) });
  expect(short.body.data.endpoints.length).toBe(MANY - 1);
  const last = await usage(h, { client_id: CONFIDENTIAL.id, limit: '1', cursor: short.body.next_cursor });
  expect([last.body.data.endpoints.map((e: Endpoint) => e.api_path), last.body.next_cursor]).toEqual([[paths.at(-1)], null]);
  expect((await usage(h, { client_id: CONFIDENTIAL.id, limit: '1000' })).status).toBe(200);

  for (const [query, field] of [
    [{ limit: '0' }, 'limit'],
    [{ limit: '1001' }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ limit: '0x10' }, 'limit'],
    [{ limit: '1e2' }, 'limit'],
    [{ limit: ' 5' }, 'limit'],
    [{ cursor: 'not a cursor!' }, 'cursor'],
    [{ cursor: `${first.body.next_cursor}=` }, 'cursor'],
    [{ cursor: 'AA' }, 'cursor'],
    [{ page: '2' }, 'page'],
  ] as const) {
    const res = await usage(h, { client_id: CONFIDENTIAL.id, ...query });
    expect(res.status, JSON.stringify(query)).toBe(400);
    expect(res.body.data.errors[0].field).toBe(field);
  }
  // A limit past every integer names the page's bound first, not JavaScript's.
  const huge = await usage(h, { client_id: CONFIDENTIAL.id, limit: '99999999999999999999' });
  expect([huge.status, huge.body.data.errors[0].message]).toEqual([400, expect.stringMatching(/1000/)]);

  // The endpoint a cursor names may be reset meanwhile: the next page starts after it all the same.
  expect((await reset(h, { client_id: CONFIDENTIAL.id, api_path: paths[99]! })).body.data.endpoints).toBe(1);
  const after = await usage(h, { client_id: CONFIDENTIAL.id, cursor: first.body.next_cursor });
  expect(after.body.data.endpoints.map((e: Endpoint) => e.api_path)).toEqual(paths.slice(100));
}

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

  it(`answers ${MANY} endpoints a page at a time in path order: 100 and a cursor, then 50 and null; limit and cursor checked`, async () => {
    const store = createMemoryQuotaStore();
    const h = await host(adapter, store);
    await pagesThrough(h, await callMany(h, store));
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

    it(`one process reads the ${MANY} endpoints the application used through the other a page at a time`, async () => {
      const stores = (shared ??= open());
      const [one, two] = [await host('express', stores.store()), await host('express', stores.store())];
      await pagesThrough(two, await callMany(one, stores.store()));
    });
  });
}

describeRedis('Redis', () => twoProcesses('Redis', () => redisQuotaStores('admin_usage')));
describePostgres('PostgreSQL', () => twoProcesses('PostgreSQL', () => postgresQuotaStores('admin_usage')));
