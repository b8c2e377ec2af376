/**
 * get_quota through the public HTTP surface, on every adapter as in quota.test.ts: its 401 and
 * 400, the report of an endpoint's counters on the injected clock, never charged, and periods
 * aligned to quota.timeZone.
 */
import { describe, expect, it } from 'vitest';
import { DAY_RESET, expectInvalidToken, expectNoCredentials, ISO_UTC, MINUTE_RESET, MONTH_RESET, T_DAY, T_MINUTE, describeQuotaOnEveryAdapter } from './quota-answers.js';
import {
  CONFIDENTIAL,
  PING,
  START,
  accessToken,
  bearer,
  getQuota,
  ping,
  report,
  usedOf,
} from './quota-helpers.js';

describeQuotaOnEveryAdapter((start) => {
  describe('get_quota', () => {
    it('requires a valid Bearer token (401, RFC 6750 3.1: invalid_token once a token is sent), then api_path (400 naming it)', async () => {
      const host = await start();
      expectNoCredentials(await getQuota(host, undefined, PING));
      expectInvalidToken(await getQuota(host, 'not-a-token', PING));
      const { token } = await accessToken(host, CONFIDENTIAL);
      for (const apiPath of [undefined, '']) {
        const res = await getQuota(host, token, apiPath);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 1 });
        expect(res.body.message).toMatch(/api_path/);
      }
      const relative = await getQuota(host, token, 'openapi/v1/ping');
      expect(relative.status).toBe(400);
      expect(relative.body.message).toMatch(/api_path/);
      // A path no call can reach, or two of them: which was meant?
      for (const query of [`api_path=${encodeURIComponent('/openapi/v1/x/../ping')}`, `api_path=${encodeURIComponent('/openapi/v1/x/%2e%2e/ping')}`, `api_path=${PING}&api_path=/openapi/v1/x`]) {
        const res = await host.http().get(`/openapi/v1/get_quota?${query}`).set(bearer(token));
        expect([res.status, res.body.data?.errors?.[0]?.field], query).toEqual([400, 'api_path']);
      }
    });

    it('answers the get_quota report with time = the injected clock; calling it never charges or counts', async () => {
      const host = await start();
      const { token } = await accessToken(host, CONFIDENTIAL);
      for (let i = 0; i < 2; i++) expect((await ping(host, token)).status).toBe(200);

      const res = await getQuota(host, token, PING);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        code: 0,
        message: expect.any(String),
        data: {
          api_path: PING,
          scope: 'system',
          cost: 1,
          periods: [
            { period: 'minute', limit: 3, used: 2, remaining: 1, unlimited: false, reset_at: MINUTE_RESET },
            { period: 'day', limit: 1000, used: 2, remaining: 998, unlimited: false, reset_at: DAY_RESET },
            { period: 'month', limit: 0, used: 2, remaining: -1, unlimited: true, reset_at: MONTH_RESET },
          ],
        },
        time: new Date(START).toISOString(),
      });
      expect(res.body.time).toMatch(ISO_UTC);

      host.clock.advance(1_234);
      for (let i = 0; i < 10; i++) {
        const body = await report(host, token, PING);
        expect(body.time).toBe('2031-05-12T08:30:16.234Z');
        expect(body.data.periods.map((p) => p.used)).toEqual([2, 2, 2]);
      }
      // get_quota is not an endpoint the quota counts, and the guarded endpoint still has its 3rd call.
      expect(await usedOf(host, token, '/openapi/v1/get_quota')).toEqual([0, 0, 0]);
      expect((await ping(host, token)).headers.ratelimit).toBe(`"minute";r=0;t=44, "day";r=997;t=${T_DAY - 1}`); // 1.234 s later, rounded up
      expect(host.handled).toHaveLength(3);
    });

    it("aligns the day and month to quota.timeZone: Asia/Shanghai's day ends at 16:00Z", async () => {
      const host = await start({ defaults: { minute: 3 }, timeZone: 'Asia/Shanghai' }, { accessTokenSeconds: 86_400 });
      const { token } = await accessToken(host, CONFIDENTIAL);
      const res = await ping(host, token);
      expect(res.headers.ratelimit).toBe(`"minute";r=2;t=${T_MINUTE}, "day";r=999;t=26985`);
      const body = await report(host, token, PING);
      expect(body.data.periods.map((p) => [p.period, p.reset_at])).toEqual([
        ['minute', MINUTE_RESET],
        ['day', '2031-05-12T16:00:00.000Z'],
        ['month', '2031-05-31T16:00:00.000Z'],
      ]);

      host.clock.set(Date.UTC(2031, 4, 12, 15, 59, 59, 999));
      expect(await usedOf(host, token, PING)).toEqual([0, 1, 1]);
      host.clock.set(Date.UTC(2031, 4, 12, 16, 0, 0));
      const next = await report(host, token, PING);
      expect(next.data.periods.map((p) => [p.used, p.reset_at])).toEqual([
        [0, '2031-05-12T16:01:00.000Z'],
        [0, '2031-05-13T16:00:00.000Z'],
        [1, '2031-05-31T16:00:00.000Z'],
      ]);
    });
  });
});
