/**
 * docs/quota.md through the public HTTP surface, on every adapter as in quota.test.ts: what a call
 * costs and which calls share a counter. Global and client rules, one counter per application,
 * and paths that differ only in a slash, a query, letter case or percent-encoding.
 */
import { describe, expect, it } from 'vitest';
import type { QuotaOptions } from '../../src/options.js';
import { ALICE_AUTH, DAY_RESET, expectRateLimit, MINUTE_RESET, MONTH_RESET, T_DAY, T_MINUTE, describeQuotaOnEveryAdapter } from './quota-answers.js';
import {
  CONFIDENTIAL,
  ORDERS,
  OTHER,
  PING,
  accessToken,
  getQuota,
  ping,
  postOrder,
  report,
  usedOf,
} from './quota-helpers.js';

describeQuotaOnEveryAdapter((start) => {
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
    for (const apiPath of [PING, `${PING}/`]) {
      const body = await report(host, token, apiPath);
      expect(body.data.api_path).toBe(PING);
      expect(body.data.periods.map((p) => p.used)).toEqual([3, 3, 3]);
    }
    // get_quota's api_path is the path alone: a "?" in it could be an escaped one of the path.
    const withQuery = await getQuota(host, token, `${PING}?x=1`);
    expect([withQuery.status, withQuery.body.data.errors[0].field]).toEqual([400, 'api_path']);
  });

  // Express and Connect route case-insensitively by default (so does @koa/router, which the Koa

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

  it('RFC 3986 6.2.2.2: a path with percent-encoded letters counts against the same endpoint, on every host that routes it there', async () => {
    const host = await start();
    const { token } = await accessToken(host, CONFIDENTIAL);
    const statuses: number[] = [];
    // Hosts that decode before routing (Fastify, Hono) reach the ping handler with these; the others answer 404.
    for (const path of ['/openapi/v1/%70ing', '/openapi/v1/p%69ng', '/openapi/%76%31/ping', '/openapi/v1/pin%67', PING, PING, PING, PING]) {
      statuses.push((await ping(host, token, path)).status);
    }
    const admitted = statuses.filter((status) => status === 200).length;
    expect(admitted, `statuses ${statuses.join(' ')}`).toBe(3);
    expect(host.handled).toHaveLength(3);
    expect(statuses.at(-1)).toBe(429);
    expect(await usedOf(host, token, PING)).toEqual([3, 3, 3]);
  });
});
