/**
 * docs/quota.md through the public HTTP surface: a host app on Express, Koa
 * and Connect guards its own OpenAPI routes with `platform.quota()`; applications call them with
 * access tokens obtained through /oauth/authorize, /oauth/consent and /oauth/token. Time is the
 * injected clock, 2031-05-12T08:30:15Z unless a test moves it, so every header value is exact.
 */
import { Redis } from 'ioredis';
import type { Response } from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import connect from 'connect';
import express from 'express';
import Koa from 'koa';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { silentLogger } from '../../src/core/logger.js';
import type { QuotaOptions } from '../../src/options.js';
import { createMemoryOAuthStore } from '../../src/oauth/store/memory.js';
import { newGrantId, newToken } from '../../src/oauth/token-format.js';
import { createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { issueGrant } from '../oauth/store-conformance.js';
import { capturingLogger } from '../support/logger.js';
import { oauthTestOptions, sharedSigningKey } from '../support/oauth.js';
import { describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { hostPort, startTcpProxy, viaProxy, type TcpProxy } from '../support/tcp-proxy.js';
import {
  ADAPTER_NAMES,
  CONFIDENTIAL,
  ORDERS,
  bearer,
  ORDER_ITEM,
  OTHER,
  PING,
  START,
  accessToken,
  closeHosts,
  exchange,
  getQuota,
  ping,
  postOrder,
  report,
  startHost,
  usedOf,
  type AdapterName,
  type HostSetup,
  type QuotaHost,
} from './quota-helpers.js';

// The injected clock starts 15 s into a minute: every "seconds until" below follows from that.
const MINUTE_RESET = '2031-05-12T08:31:00.000Z';
const DAY_RESET = '2031-05-13T00:00:00.000Z';
const MONTH_RESET = '2031-06-01T00:00:00.000Z';
const T_MINUTE = 45;
const T_DAY = 55_785;
const T_MONTH = 1_697_385;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const DEFAULTS: QuotaOptions = { defaults: { minute: 3 } };
const ALICE_AUTH = { clientId: CONFIDENTIAL.id, sub: 'user-alice', scope: ['openid', 'profile'] };

/** 401, code 1, `WWW-Authenticate: Bearer ... error="invalid_token"` (docs/quota.md). */
function expectInvalidToken(res: Response): void {
  expect(res.status, res.text).toBe(401);
  expect(res.body).toMatchObject({ code: 1 });
  expect((res.body as { message?: unknown }).message).toEqual(expect.stringMatching(/\S/));
  expect(res.headers['www-authenticate']).toMatch(/^Bearer\b.*\berror="invalid_token"/);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

/** RFC 6750 3.1: a request without Bearer credentials gets the challenge and no error code. */
function expectNoCredentials(res: Response): void {
  expect(res.status, res.text).toBe(401);
  expect(res.body).toMatchObject({ code: 1 });
  expect(res.headers['www-authenticate']).toBe('Bearer realm="openapi"');
}

function expectRateLimit(res: Response, policy: string, state: string): void {
  expect(res.headers['ratelimit-policy']).toBe(policy);
  expect(res.headers.ratelimit).toBe(state);
}

describe.each(ADAPTER_NAMES)('quota over HTTP on %s', (adapter: AdapterName) => {
  const start = (quota: QuotaOptions = DEFAULTS, extra: Omit<HostSetup, 'quota'> = {}): Promise<QuotaHost> => startHost(adapter, { quota, ...extra });

  afterEach(closeHosts);

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

  describe('rules', () => {
    const rules: QuotaOptions = {
      defaults: { minute: 3 },
      rules: [
        { scope: 'global', apiPath: ORDERS, cost: 2, minute: 5 },
        // Fields a client rule leaves out take the defaults (cost 1), not the global rule's.
        { scope: 'client', clientId: CONFIDENTIAL.id, apiPath: ORDERS, minute: 0 },
      ],
    };

    it('a global rule with cost 2: each call takes 2 units; the call that would cross the limit is 429', async () => {
      const host = await start(rules);
      const { token } = await accessToken(host, OTHER);
      const first = await postOrder(host, token);
      expect(first.status).toBe(200);
      expectRateLimit(first, '"minute";q=5;w=60, "day";q=1000;w=86400', `"minute";r=3;t=${T_MINUTE}, "day";r=998;t=${T_DAY}`);
      expect((await postOrder(host, token)).headers.ratelimit).toBe(`"minute";r=1;t=${T_MINUTE}, "day";r=996;t=${T_DAY}`);
      const third = await postOrder(host, token);
      expect(third.status).toBe(429);
      expect(third.body.data).toEqual({ api_path: ORDERS, period: 'minute', reset_at: MINUTE_RESET });
      expect(host.handled).toEqual(['orders', 'orders']);

      const body = await report(host, token, ORDERS);
      expect(body.data).toMatchObject({ api_path: ORDERS, scope: 'global', cost: 2 });
      expect(body.data.periods[0]).toEqual({ period: 'minute', limit: 5, used: 4, remaining: 1, unlimited: false, reset_at: MINUTE_RESET });
    });

    it('a client rule wins over the global rule for that client; limit 0 is unlimited but still counted', async () => {
      const host = await start(rules);
      const { token } = await accessToken(host, CONFIDENTIAL);
      for (let i = 0; i < 6; i++) {
        const res = await postOrder(host, token);
        expect(res.status).toBe(200);
        // The unlimited minute has no item in either header.
        expectRateLimit(res, '"day";q=1000;w=86400', `"day";r=${999 - i};t=${T_DAY}`);
      }
      const body = await report(host, token, ORDERS);
      expect(body.data).toEqual({
        api_path: ORDERS,
        scope: 'client',
        cost: 1,
        periods: [
          { period: 'minute', limit: 0, used: 6, remaining: -1, unlimited: true, reset_at: MINUTE_RESET },
          { period: 'day', limit: 1000, used: 6, remaining: 994, unlimited: false, reset_at: DAY_RESET },
          { period: 'month', limit: 0, used: 6, remaining: -1, unlimited: true, reset_at: MONTH_RESET },
        ],
      });
      // Another client gets the global rule; a path without rules gets the system defaults.
      const other = await accessToken(host, OTHER);
      expect((await report(host, other.token, ORDERS)).data).toMatchObject({ scope: 'global', cost: 2 });
      expect((await report(host, token, PING)).data).toMatchObject({ scope: 'system', cost: 1 });
      expect((await report(host, token, PING)).data.periods.map((p) => p.limit)).toEqual([3, 1000, 0]);
    });
  });

  it('counts per application: CONFIDENTIAL and OTHER have separate counters; two users of one application share one', async () => {
    const host = await start();
    const alice = await accessToken(host, CONFIDENTIAL);
    const bob = await accessToken(host, CONFIDENTIAL, { user: 'bob' });
    const other = await accessToken(host, OTHER); // also alice, but another application
    for (let i = 0; i < 2; i++) expect((await ping(host, alice.token)).status).toBe(200);
    expect((await ping(host, bob.token)).status).toBe(200);
    expect((await ping(host, alice.token)).status).toBe(429);
    expect((await ping(host, bob.token)).status).toBe(429);

    const res = await ping(host, other.token);
    expect(res.status).toBe(200);
    expect(res.body.platformAuth).toEqual({ ...ALICE_AUTH, clientId: OTHER.id });
    expect(res.headers.ratelimit).toBe(`"minute";r=2;t=${T_MINUTE}, "day";r=999;t=${T_DAY}`);
    expect(await usedOf(host, alice.token, PING)).toEqual([3, 3, 3]);
    expect(await usedOf(host, other.token, PING)).toEqual([1, 1, 1]);
  });

  it('normalises paths: a trailing slash and a query string count against the same endpoint', async () => {
    const host = await start();
    const { token } = await accessToken(host, CONFIDENTIAL);
    const states: string[] = [];
    for (const path of [PING, `${PING}/`, `${PING}?x=1`]) {
      const res = await ping(host, token, path);
      expect(res.status, path).toBe(200);
      expect(res.body.platformAuth).toEqual(ALICE_AUTH);
      states.push(res.headers.ratelimit as string);
    }
    expect(states.map((s) => s.split(',')[0])).toEqual(['"minute";r=2;t=45', '"minute";r=1;t=45', '"minute";r=0;t=45']);
    const rejected = await ping(host, token, `${PING}/?y=2`);
    expect(rejected.status).toBe(429);
    expect(rejected.body.data.api_path).toBe(PING);
    for (const apiPath of [PING, `${PING}/`, `${PING}?x=1`]) {
      const body = await report(host, token, apiPath);
      expect(body.data.api_path).toBe(PING);
      expect(body.data.periods.map((p) => p.used)).toEqual([3, 3, 3]);
    }
  });

  // Express and Connect route case-insensitively by default (so does @koa/router, which the Koa
  // host imitates): a different spelling must not get an allowance of its own.
  it('a path that differs only in letter case reaches the same handler and counts against the same endpoint', async () => {
    const host = await start();
    const { token } = await accessToken(host, CONFIDENTIAL);
    const statuses: number[] = [];
    for (const path of [PING, '/openapi/v1/PING', '/openapi/v1/Ping', '/openapi/v1/pinG']) {
      const res = await ping(host, token, path);
      statuses.push(res.status);
    }
    expect(host.handled.length, 'every variant is routed to the ping handler, unless refused').toBe(statuses.filter((s) => s === 200).length);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await usedOf(host, token, PING)).toEqual([3, 3, 3]);
  });

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

describe('platform.quota(apiPath) names the endpoint of a parameterised route (express)', () => {
  afterEach(closeHosts);

  it('every id counts against /openapi/v1/orders/:id, and get_quota reports it under that name', async () => {
    const host = await startHost('express', { quota: { defaults: { minute: 3 } } });
    const { token } = await accessToken(host, CONFIDENTIAL);
    const statuses: number[] = [];
    for (const id of ['A1', 'B2', 'C3', 'D4']) {
      statuses.push((await host.http().get(`${ORDERS}/${id}`).set(bearer(token))).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(host.handled.filter((h) => h === 'order')).toHaveLength(3);
    expect(await usedOf(host, token, ORDER_ITEM)).toEqual([3, 3, 3]);
  });
});

describe('the guard with the memory OAuth store and memory counters (express)', () => {
  it("validates the token and charges within the tick: the host's next() runs before the middleware returns", async () => {
    const store = createMemoryOAuthStore();
    const grantId = newGrantId();
    const { value, ref } = newToken(grantId);
    await issueGrant(store, {
      grantId,
      code: { clientId: CONFIDENTIAL.id, expiresAt: Date.now() + 60_000 },
      access: { ref, scope: ['openid', 'offline_access'], expiresAt: Date.now() + 3_600_000 },
      refresh: false,
    });
    const platform = expressPlatform({
      courier: false,
      oauth: { ...oauthTestOptions(), store, signingKeys: [await sharedSigningKey()], authenticate: () => null },
      quota: { defaults: { minute: 3 } },
      logger: silentLogger,
    });
    await platform.platform.ready();
    const guard = platform.quota();
    const headers: Record<string, string> = {};
    const res = { setHeader: (name: string, value: string) => void (headers[name] = value) } as unknown as express.Response;
    const call = (token: string) => {
      const req = { method: 'GET', url: PING, headers: { authorization: `Bearer ${token}` } } as unknown as express.Request;
      let ranInTick = false;
      let returned = false;
      guard(req, res, () => {
        ranInTick = !returned;
      });
      returned = true;
      return { ranInTick, req };
    };
    const { ranInTick, req } = call(value);
    expect(ranInTick).toBe(true);
    expect(req.platformAuth).toEqual({ clientId: CONFIDENTIAL.id, sub: 'user-alice', scope: ['openid', 'offline_access'] });
    expect(headers.ratelimit).toMatch(/^"minute";r=2;/);
  });
});

describe('platform.quota() on a platform created with quota: false', () => {
  const options = { courier: false as const, oauth: false as const, quota: false as const, logger: silentLogger };

  it('throws a TypeError while the host defines its routes, on every adapter', () => {
    const app = express();
    const onExpress = expressPlatform(options);
    expect(() => app.get(PING, onExpress.quota(), (_req, res) => res.end())).toThrow(TypeError);
    expect(() => onExpress.quota()).toThrow(/quota/);

    const onKoa = koaPlatform(options);
    expect(() => new Koa().use(onKoa.quota())).toThrow(TypeError);

    const onConnect = connectPlatform(options);
    expect(() => connect().use(PING, onConnect.quota())).toThrow(TypeError);
  });
});

describeRedis('quota over HTTP when the Redis store is cut (express)', () => {
  let proxy: TcpProxy;
  let viaProxyClient: Redis;
  let directClient: Redis;
  const prefix = uniqueName('quota_http');

  beforeAll(async () => {
    const url = redisUrl as string;
    proxy = await startTcpProxy(hostPort(url, 6379));
    viaProxyClient = new Redis(viaProxy(url, proxy), {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: 300,
      retryStrategy: () => 25,
    });
    viaProxyClient.on('error', () => {}); // reconnection errors are expected while cut
    await new Promise<void>((resolve, reject) => {
      viaProxyClient.once('ready', () => resolve());
      setTimeout(() => reject(new Error('redis via the proxy is not ready')), 5000).unref();
    });
    directClient = new Redis(url, { maxRetriesPerRequest: 1 });
  });

  /** Until the proxied connection is up again (after a cut), so each test starts with a working store. */
  async function redisReady(): Promise<void> {
    await vi.waitFor(() => expect(viaProxyClient.status).toBe('ready'), { timeout: 5_000, interval: 25 });
  }

  afterEach(async () => {
    proxy?.resume();
    await closeHosts();
  });

  beforeEach(redisReady);

  afterAll(async () => {
    viaProxyClient?.disconnect();
    await proxy?.close();
    if (directClient) {
      let cursor = '0';
      do {
        const [next, keys] = await directClient.scan(cursor, 'MATCH', `{${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await directClient.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await directClient.quit();
    }
  });

  const storeFor = (label: string): QuotaStore => createRedisQuotaStore({ client: viaProxyClient, prefix: `${prefix}_${label}` });

  /** Until get_quota (free) answers from the store again; at most 5 s. */
  async function waitForStore(host: QuotaHost, token: string): Promise<void> {
    await vi.waitFor(async () => expect((await getQuota(host, token, PING)).status).toBe(200), { timeout: 5_000, interval: 25 });
  }

  it("onStoreError 'closed': 503 code 1 while cut (never 500), the store is used again once it is back", async () => {
    const logger = capturingLogger();
    const quota: QuotaOptions = { store: storeFor('closed'), onStoreError: 'closed', storeTimeoutMs: 200, defaults: { minute: 3 } };
    const host = await startHost('express', { quota, logger });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]);

    proxy.cut();
    for (const res of [await ping(host, token), await postOrder(host, token), await getQuota(host, token, PING)]) {
      expect(res.status, res.text).toBe(503);
      expect(res.body).toMatchObject({ code: 1 });
      expect(res.body.message).toMatch(/\S/);
    }
    expect(host.handled).toEqual(['ping']);
    const quotaWarnings = logger.records.filter((r) => r.level === 'warn' && /quota/.test(r.message));
    expect(quotaWarnings.map((r) => r.message)).toEqual([expect.stringMatching(/quota store unavailable/)]); // once per outage

    proxy.resume();
    await waitForStore(host, token);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]);
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([2, 2, 2]);
    expect(host.handled).toEqual(['ping', 'ping']);
  });

  it("onStoreError 'open': the insurance limiter admits what is left of the minute the store reported, then 429; the store is used again once it is back", async () => {
    const quota: QuotaOptions = { store: storeFor('open'), onStoreError: 'open', storeTimeoutMs: 200, defaults: { minute: 3 } };
    const host = await startHost('express', { quota, logger: capturingLogger() });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]);

    proxy.cut();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await ping(host, token)).status);
    expect(statuses).toEqual([200, 200, 429]); // the store had counted 1 of 3 this minute
    const rejected = await ping(host, token);
    expect(rejected.status).toBe(429);
    expect(rejected.body).toMatchObject({ code: 1, data: { api_path: PING, period: 'minute' } });
    expect(Number(rejected.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(host.handled).toHaveLength(3);

    proxy.resume();
    await waitForStore(host, token);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]); // the outage's calls never reached the store
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([2, 2, 2]);
  });
});
