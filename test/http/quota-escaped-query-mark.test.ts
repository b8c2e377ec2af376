/**
 * A path that holds an escaped `?` (`/openapi/v1/x%3Fy`) is an endpoint like any other: the guard
 * counts it as `/openapi/v1/x%3fy` on every adapter, and get_quota, the usage history and the
 * usage reset find it when `api_path` names the path as sent (URL-encoded in the query once more:
 * `%253F`). A `?` or `#` in the `api_path` value itself names no path a guard counts (a request's
 * path never holds one): it is a 400 naming `api_path`, never another endpoint's answer.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { accessToken, ADAPTER_NAMES, bearer, closeHosts, CONFIDENTIAL, ping, QUERY_MARK, startHost, type QuotaHost } from './quota-helpers.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
/** What the guard counts a request to QUERY_MARK as. */
const COUNTED = '/openapi/v1/x%3fy';

afterEach(closeHosts);

const history = (h: QuotaHost, apiPath: string) => h.http().get(`/admin/usage/history?client_id=${CONFIDENTIAL.id}&${apiPath}`).set(OPERATOR);

describe.each(ADAPTER_NAMES)('a path holding an escaped "?", on %s', (adapter) => {
  it('is counted, and get_quota, the history and the reset find what the guard counted', async () => {
    const h = await startHost(adapter, { quota: { history: { flushIntervalMs: 100 } }, platform: { admin: { token: TOKEN } } });
    const { token } = await accessToken(h, CONFIDENTIAL);
    const call = await ping(h, token, QUERY_MARK);
    expect(call.status, call.text).toBe(200);
    const usage = await h.http().get(`/admin/usage?client_id=${CONFIDENTIAL.id}`).set(OPERATOR);
    expect(usage.body.data.endpoints.map((e: { api_path: string }) => e.api_path)).toEqual([COUNTED]);

    // `api_path` names the path as it was sent, `%3F` and all: URL-encoded in the query, `%253F`.
    const named = `api_path=${encodeURIComponent(QUERY_MARK)}`;
    const quota = await h.http().get(`/openapi/v1/get_quota?${named}`).set(bearer(token));
    expect([quota.status, quota.body.data.api_path, quota.body.data.periods.map((p: { used: number }) => p.used)]).toEqual([200, COUNTED, [1, 1, 1]]);
    await vi.waitFor(
      async () => {
        const res = await history(h, named);
        expect(res.status, res.text).toBe(200);
        const series = res.body.data.series as { api_path: string; points: { admitted: number }[] }[];
        expect(series.map((s) => [s.api_path, s.points.reduce((sum, p) => sum + p.admitted, 0)])).toEqual([[COUNTED, 1]]);
      },
      { timeout: 5_000, interval: 50 },
    );
    const reset = await h.http().delete(`/admin/usage?client_id=${CONFIDENTIAL.id}&${named}`).set(OPERATOR);
    expect([reset.status, reset.body.data.api_path, reset.body.data.endpoints]).toEqual([200, COUNTED, 1]);
  });

  it('written with a "?" or "#" in the api_path value (the escape decoded with the query) is a 400 naming api_path, not another endpoint', async () => {
    const h = await startHost(adapter, { quota: {}, platform: { admin: { token: TOKEN } } });
    const { token } = await accessToken(h, CONFIDENTIAL);
    expect((await ping(h, token, QUERY_MARK)).status).toBe(200);
    for (const sent of ['api_path=/openapi/v1/x%3Fy', 'api_path=/openapi/v1/ping?x=1', `api_path=${encodeURIComponent('/openapi/v1/x#y')}`]) {
      for (const [route, res] of [
        ['get_quota', await h.http().get(`/openapi/v1/get_quota?${sent}`).set(bearer(token))],
        ['history', await history(h, sent)],
        ['reset', await h.http().delete(`/admin/usage?client_id=${CONFIDENTIAL.id}&${sent}`).set(OPERATOR)],
      ] as const) {
        expect([res.status, res.body.data?.errors?.[0]?.field], `${route} ${sent}`).toEqual([400, 'api_path']);
        expect(res.body.data.errors[0].message).toContain('%253F');
      }
    }
    // Nothing was reset: the counter is still there.
    expect((await h.http().get(`/admin/usage?client_id=${CONFIDENTIAL.id}`).set(OPERATOR)).body.data.endpoints).toHaveLength(1);
  });
});
