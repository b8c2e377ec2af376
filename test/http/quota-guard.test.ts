/**
 * platform.quota() itself, on Express unless stated: the name a parameterised route counts
 * under, a guard that answers within the tick on memory stores, what guards that name no endpoint
 * cost (a warning, a bounded usage history), and a platform without quota.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import connect from 'connect';
import express from 'express';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import Koa from 'koa';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { silentLogger } from '../../src/core/logger.js';
import { createMemoryOAuthStore } from '../../src/oauth/store/memory.js';
import { newGrantId, newToken } from '../../src/oauth/token-format.js';
import { issueGrant } from '../oauth/store-conformance.js';
import { oauthTestOptions, sharedSigningKey } from '../support/oauth.js';
import { CONFIDENTIAL, ORDERS, bearer, ORDER_ITEM, PING, accessToken, closeHosts, startHost, usedOf } from './quota-helpers.js';
import { MANY_UNNAMED_ENDPOINTS } from '../../src/guard/unnamed-endpoints.js';
import { UNNAMED_PATHS_PER_HOUR } from '../../src/history/types.js';
import { capturingLogger } from '../support/logger.js';
import { serve } from '../support/net.js';

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

/** A memory OAuth store holding one access token of CONFIDENTIAL's, valid for an hour. */
async function storeWithAccessToken(scope: string[]) {
  const store = createMemoryOAuthStore();
  const grantId = newGrantId();
  const { value, ref } = newToken(grantId);
  await issueGrant(store, {
    grantId,
    code: { clientId: CONFIDENTIAL.id, expiresAt: Date.now() + 60_000 },
    access: { ref, scope, expiresAt: Date.now() + 3_600_000 },
    refresh: false,
  });
  return { store, value };
}

describe('the guard with the memory OAuth store and memory counters (express)', () => {
  it("validates the token and charges within the tick: the host's next() runs before the middleware returns", async () => {
    const { store, value } = await storeWithAccessToken(['openid', 'offline_access']);
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

describe('guards that name no endpoint count each path as an endpoint (express)', () => {
  it(`warn once, at the ${MANY_UNNAMED_ENDPOINTS}th distinct path they count, with the fix; a named guard's ids never count toward it`, async () => {
    const { store, value } = await storeWithAccessToken(['openid']);
    const logger = capturingLogger();
    const platform = expressPlatform({ courier: false, oauth: { ...oauthTestOptions(), store, signingKeys: [await sharedSigningKey()], authenticate: () => null }, quota: { defaults: { minute: 0, day: 0 } }, logger });
    await platform.platform.ready();
    const app = express();
    app.use(platform);
    app.get(ORDER_ITEM, platform.quota(ORDER_ITEM), (_req, res) => res.json({ ok: true }));
    app.use('/openapi/v1/items', platform.quota(), (_req, res) => res.json({ ok: true }));
    const server = await serve(app);
    try {
      const statuses = new Set<number>();
      const call = async (path: string) => statuses.add((await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${value}` } })).status);
      const calls = async (count: number, path: (i: number) => string) => {
        for (let i = 0; i < count; i += 25) await Promise.all(Array.from({ length: Math.min(25, count - i) }, (_, j) => call(path(i + j))));
      };
      const warnings = () => logger.records.filter((record) => record.level === 'warn' && record.message.includes('name no endpoint'));
      await calls(MANY_UNNAMED_ENDPOINTS, (i) => `${ORDERS}/${i}`);
      await calls(MANY_UNNAMED_ENDPOINTS - 1, (i) => `/openapi/v1/items/${i}`);
      expect(warnings()).toHaveLength(0);
      await call(`/openapi/v1/items/${MANY_UNNAMED_ENDPOINTS - 1}`);
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0]!.message).toContain("platform.quota('/openapi/v1/orders/:id')");
      await calls(100, (i) => `/openapi/v1/items/more-${i}`);
      expect(warnings()).toHaveLength(1);
      // Every call was counted and admitted (the limits are 0, unlimited).
      expect([...statuses]).toEqual([200]);
    } finally {
      await server.close();
    }
  });

  it("share one allowance among the spellings Hono routes alike: its router decodes %21 %27 %28 %29 %2A (hono)", async () => {
    const { store, value } = await storeWithAccessToken(['openid']);
    const platform = honoPlatform({
      courier: false,
      oauth: { ...oauthTestOptions(), store, signingKeys: [await sharedSigningKey()], authenticate: () => null },
      quota: { defaults: { minute: 2 } },
      logger: silentLogger,
    });
    await platform.platform.ready();
    // Hono's default router, which decodes a path with decodeURI before it matches.
    const app = new Hono();
    app.use(platform);
    app.use('/openapi/v1/*', platform.quota());
    app.get("/openapi/v1/a!'(x)*", (c) => c.json({ ok: true }));
    const server = await serve(getRequestListener(app.fetch));
    try {
      const statuses: number[] = [];
      for (const path of ["/openapi/v1/a!'(x)*", "/openapi/v1/a%21%27%28x%29%2A", "/openapi/v1/a%21'(x)*", "/openapi/v1/a!'%28x%29%2a"]) {
        statuses.push((await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${value}` } })).status);
      }
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      await server.close();
      await platform.platform.close();
    }
  });

  it(`keep ${UNNAMED_PATHS_PER_HOUR} of an application's made-up paths of an hour by name in the usage history, the rest's calls in \`other\`, and a path a rule names always`, async () => {
    const { store, value } = await storeWithAccessToken(['openid']);
    const admin = 'operator-token-0123456789abcdef0123456789';
    const REAL = '/openapi/v1/items/real';
    const platform = expressPlatform({
      courier: false,
      oauth: { ...oauthTestOptions(), store, signingKeys: [await sharedSigningKey()], authenticate: () => null },
      quota: { defaults: { minute: 0, day: 0 }, rules: [{ scope: 'global', apiPath: REAL, minute: 1000 }], history: { flushIntervalMs: 100 } },
      admin: { token: admin },
      logger: silentLogger,
    });
    await platform.platform.ready();
    const app = express();
    app.use(platform);
    app.use('/openapi/v1/items', platform.quota(), (_req, res) => res.json({ ok: true }));
    const server = await serve(app);
    try {
      const call = (path: string) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${value}` } });
      const made = UNNAMED_PATHS_PER_HOUR + 30;
      for (let i = 0; i < made; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => call(`/openapi/v1/items/${i + j}`)));
      // Past the bound, a path a rule names is still recorded by name.
      for (let i = 0; i < 5; i += 1) await call(REAL);
      const history = async (apiPath?: string) => {
        const query = new URLSearchParams({ client_id: CONFIDENTIAL.id, ...(apiPath ? { api_path: apiPath } : {}) });
        const res = await fetch(`${server.url}/admin/usage/history?${query}`, { headers: { authorization: `Bearer ${admin}` } });
        return ((await res.json()) as { data: { series: { api_path: string; points: { admitted: number }[] }[]; other: { endpoints: number; points: { admitted: number }[] } | null } }).data;
      };
      const calls = (points: { admitted: number }[]) => points.reduce((sum, point) => sum + point.admitted, 0);
      await vi.waitFor(async () => expect(calls((await history(REAL)).series[0]!.points)).toBe(5), { timeout: 10_000, interval: 50 });
      const { series, other } = await history();
      // 101 endpoints by name: the answer shows the 100 busiest, REAL among them, and sums the one left out.
      expect(series).toHaveLength(100);
      expect(series.map((one) => one.api_path)).toContain(REAL);
      expect(other!.endpoints).toBe(1);
      // The 30 made-up paths recorded without their path, and the one left out of the answer.
      expect(calls(other!.points)).toBe(31);
      expect(calls([...series, other!].flatMap((one) => one.points))).toBe(made + 5);
    } finally {
      await server.close();
      await platform.platform.close();
    }
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
