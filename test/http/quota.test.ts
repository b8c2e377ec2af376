/**
 * docs/quota.md through the public HTTP surface: a host app on Express, Koa and Connect guards
 * its own OpenAPI routes with `platform.quota()`; applications call them with access tokens
 * obtained through /oauth/authorize, /oauth/consent and /oauth/token. Time is the injected clock,
 * 2031-05-12T08:30:15Z unless a test moves it, so every header value is exact.
 *
 * Here: who gets through (401 without a valid token), the RateLimit headers of an admitted call,
 * and exhaustion (429, Retry-After, roll-over). Rules and shared counters, get_quota, the guard
 * itself and a cut store each have a quota-*.test.ts of their own.
 */
import { describe, expect, it } from 'vitest';
import { ALICE_AUTH, DAY_RESET, DEFAULTS, expectInvalidToken, expectNoCredentials, expectRateLimit, MINUTE_RESET, MONTH_RESET, T_DAY, T_MINUTE, T_MONTH, describeQuotaOnEveryAdapter } from './quota-answers.js';
import {
  CONFIDENTIAL,
  ORDERS,
  OTHER,
  PING,
  accessToken,
  exchange,
  getQuota,
  ping,
  postOrder,
  report,
  usedOf,
} from './quota-helpers.js';

describeQuotaOnEveryAdapter((start) => {
  describe('401 without a valid Bearer access token; the host handler never runs', () => {
    it('RFC 6750 3.1: no Bearer credentials get the challenge alone; malformed and unknown tokens invalid_token, on GET and POST routes', async () => {
      const host = await start();
      const { token } = await accessToken(host, CONFIDENTIAL);
      expectNoCredentials(await ping(host, undefined));
      expectNoCredentials(await postOrder(host, undefined));
      for (const authorization of [`Basic ${Buffer.from('a:b').toString('base64')}`, token]) {
        expectNoCredentials(await host.http().get(PING).set('authorization', authorization));
      }
      for (const authorization of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer ###']) {
        expectInvalidToken(await host.http().get(PING).set('authorization', authorization));
      }
      const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      for (const unknown of ['not-a-token', 'eyJhbGciOiJIUzI1NiJ9.e30.abc', forged]) {
        expectInvalidToken(await ping(host, unknown));
        expectInvalidToken(await postOrder(host, unknown));
      }
      expect(host.handled).toEqual([]);
      // Nothing was charged by the refused calls.
      expect(await usedOf(host, token, PING)).toEqual([0, 0, 0]);
      expect(await usedOf(host, token, ORDERS)).toEqual([0, 0, 0]);
    });

    it('a revoked token (the grant ends when its authorization code is replayed)', async () => {
      const host = await start();
      const { token, code } = await accessToken(host, CONFIDENTIAL);
      expect((await ping(host, token)).status).toBe(200);
      const replay = await exchange(host, CONFIDENTIAL, code);
      expect(replay.status).toBe(400);
      expectInvalidToken(await ping(host, token));
      expectInvalidToken(await postOrder(host, token));
      expect(host.handled).toEqual(['ping']);
    });

    it('an expired token (the clock moved past the access-token lifetime)', async () => {
      const host = await start(DEFAULTS, { accessTokenSeconds: 600 });
      const { token } = await accessToken(host, CONFIDENTIAL);
      host.clock.advance(599_000);
      expect((await ping(host, token)).status).toBe(200);
      host.clock.advance(1_000);
      expectInvalidToken(await ping(host, token));
      expectInvalidToken(await postOrder(host, token));
      expectInvalidToken(await getQuota(host, token, PING));
      expect(host.handled).toEqual(['ping']);
    });
  });

  describe('admitted calls', () => {
    it('reach the host handler with platformAuth and draft-10 RateLimit headers (month unlimited: left out)', async () => {
      const host = await start();
      const alice = await accessToken(host, CONFIDENTIAL);
      const res = await ping(host, alice.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ handler: 'ping', platformAuth: ALICE_AUTH });
      expectRateLimit(res, '"minute";q=3;w=60, "day";q=1000;w=86400', `"minute";r=2;t=${T_MINUTE}, "day";r=999;t=${T_DAY}`);

      const bob = await accessToken(host, OTHER, { user: 'bob', scope: 'openid email' });
      const order = await postOrder(host, bob.token);
      expect(order.status).toBe(200);
      expect(order.body).toEqual({ handler: 'orders', platformAuth: { clientId: OTHER.id, sub: 'user-bob', scope: ['openid', 'email'] } });
      expectRateLimit(order, '"minute";q=3;w=60, "day";q=1000;w=86400', `"minute";r=2;t=${T_MINUTE}, "day";r=999;t=${T_DAY}`);
      expect(host.handled).toEqual(['ping', 'orders']);
    });

    it('a limited month appears in both headers, without w in the policy', async () => {
      const host = await start({ defaults: { minute: 3, month: 5000 } });
      const { token } = await accessToken(host, CONFIDENTIAL);
      const res = await ping(host, token);
      expect(res.status).toBe(200);
      expectRateLimit(
        res,
        '"minute";q=3;w=60, "day";q=1000;w=86400, "month";q=5000',
        `"minute";r=2;t=${T_MINUTE}, "day";r=999;t=${T_DAY}, "month";r=4999;t=${T_MONTH}`,
      );
    });
  });

  describe('exhaustion', () => {
    it('the 4th call of a 3/minute endpoint is 429 with Retry-After to the next minute; nothing is charged for it', async () => {
      const host = await start();
      const { token } = await accessToken(host, CONFIDENTIAL);
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await ping(host, token);
        expect(res.status).toBe(200);
        remaining.push(res.headers.ratelimit as string);
      }
      expect(remaining).toEqual([2, 1, 0].map((r, i) => `"minute";r=${r};t=${T_MINUTE}, "day";r=${999 - i};t=${T_DAY}`));

      const rejected = await ping(host, token);
      expect(rejected.status).toBe(429);
      expect(rejected.headers['retry-after']).toBe(String(T_MINUTE));
      expect(rejected.body).toEqual({
        code: 1,
        message: expect.stringMatching(/\S/),
        data: { api_path: PING, period: 'minute', reset_at: MINUTE_RESET },
      });
      // Every guarded response carries the RateLimit headers, the 429 included.
      expectRateLimit(rejected, '"minute";q=3;w=60, "day";q=1000;w=86400', `"minute";r=0;t=${T_MINUTE}, "day";r=997;t=${T_DAY}`);
      expect(host.handled).toEqual(['ping', 'ping', 'ping']);
      expect(await usedOf(host, token, PING)).toEqual([3, 3, 3]);

      // Retry-After follows the clock: 10 s later, 35 s are left; still nothing charged.
      host.clock.advance(10_000);
      const again = await ping(host, token);
      expect(again.status).toBe(429);
      expect(again.headers['retry-after']).toBe('35');
      expect(await usedOf(host, token, PING)).toEqual([3, 3, 3]);
      expect(host.handled).toHaveLength(3);
    });

    it('when several periods are used up, the 429 names the one that resets last and Retry-After counts to it', async () => {
      const host = await start({ defaults: { minute: 3, day: 3 } });
      const { token } = await accessToken(host, CONFIDENTIAL);
      for (let i = 0; i < 3; i++) expect((await ping(host, token)).status).toBe(200);
      const rejected = await ping(host, token);
      expect(rejected.status).toBe(429);
      expect(rejected.headers['retry-after']).toBe(String(T_DAY));
      expect(rejected.body.data).toEqual({ api_path: PING, period: 'day', reset_at: DAY_RESET });
      // The next minute does not help: the day is still used up.
      host.clock.advance(T_MINUTE * 1000);
      const later = await ping(host, token);
      expect(later.status).toBe(429);
      expect(later.headers['retry-after']).toBe(String(T_DAY - T_MINUTE));
      expect(host.handled).toHaveLength(3);
    });

    it('rolls over: at the next minute the endpoint admits again while the day keeps counting', async () => {
      const host = await start();
      const { token } = await accessToken(host, CONFIDENTIAL);
      for (let i = 0; i < 3; i++) expect((await ping(host, token)).status).toBe(200);
      expect((await ping(host, token)).status).toBe(429);

      host.clock.advance(T_MINUTE * 1000 - 1);
      expect((await ping(host, token)).status).toBe(429);
      host.clock.advance(1); // 08:31:00.000: the next minute
      const res = await ping(host, token);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toBe(`"minute";r=2;t=60, "day";r=996;t=${T_DAY - T_MINUTE}`);
      const body = await report(host, token, PING);
      expect(body.data.periods.map((p) => [p.period, p.used, p.reset_at])).toEqual([
        ['minute', 1, '2031-05-12T08:32:00.000Z'],
        ['day', 4, DAY_RESET],
        ['month', 4, MONTH_RESET],
      ]);
      expect(host.handled).toHaveLength(4);
    });
  });
});
