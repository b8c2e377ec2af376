/**
 * `GET /admin/metrics` (docs/operator.md#metrics), through HTTP on every adapter: parsed as the
 * Prometheus text format by a parser, and its counters follow the calls made (guarded calls
 * admitted and refused, a token issued, a failed client authentication, a courier call).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import connect from 'connect';
import express from 'express';
import Koa from 'koa';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { silentLogger } from '../../src/core/logger.js';
import { LABEL_VALUE_CAP } from '../../src/metrics/prometheus.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { serve, type Served } from '../support/net.js';
import { SANDBOX_DEFAULT_APP_ID, SANDBOX_DEFAULT_APP_SECRET } from '../../src/sandbox/sandbox.js';
import { accessToken, ADAPTER_NAMES, bearer, closeHosts, CONFIDENTIAL, PING, ping, startHost, type QuotaHost } from '../http/quota-helpers.js';

const served: Served[] = [];
afterEach(async () => {
  await closeHosts();
  await Promise.all(served.splice(0).map((server) => server.close()));
});

const TOKEN = 'operator-token-0123456789abcdef0123456789';

async function scrape(host: QuotaHost) {
  const res = await host.http().get('/admin/metrics').set(bearer(TOKEN));
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(res.text);
}

type Families = ReturnType<typeof parsePrometheusTextFormat>;

/** The value of the sample of `name` with exactly these labels; 0 when there is none. */
function valueOf(families: Families, name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  expect(family, name).toBeDefined();
  const sample = family!.metrics.find((m) => JSON.stringify(m.labels ?? {}) === JSON.stringify(labels));
  return sample ? Number(sample.value ?? sample.count) : 0;
}

function platformOptions(registry?: Registry) {
  return {
    admin: { token: TOKEN, ...(registry ? { registry } : {}) },
    courier: { credentials: { appId: SANDBOX_DEFAULT_APP_ID, appSecret: SANDBOX_DEFAULT_APP_SECRET } },
  };
}

describe.each(ADAPTER_NAMES)('admin metrics on %s', (adapter) => {
  it('counts guarded calls by application, endpoint and outcome, tokens, failed client authentications and courier calls', async () => {
    const host = await startHost(adapter, { quota: { rules: [{ scope: 'global', apiPath: PING, minute: 2 }] }, platform: platformOptions() });
    expect((await host.http().get('/admin/metrics')).status).toBe(401);

    const { token } = await accessToken(host, CONFIDENTIAL);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await ping(host, token)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const wrong = await host.http().post('/oauth/token').auth(CONFIDENTIAL.id, 'not-the-secret').type('form').send({ grant_type: 'client_credentials' });
    expect(wrong.status).toBe(401);
    const courier = await host.http().get('/courier/get_express_type');
    expect(courier.body.code, JSON.stringify(courier.body)).toBe(0);

    const families = await scrape(host);
    const guarded = 'courier_platform_guarded_calls_total';
    expect(valueOf(families, guarded, { client_id: CONFIDENTIAL.id, endpoint: PING, outcome: 'admitted' })).toBe(2);
    expect(valueOf(families, guarded, { client_id: CONFIDENTIAL.id, endpoint: PING, outcome: 'rejected' })).toBe(1);
    expect(valueOf(families, 'courier_platform_tokens_issued_total', { grant_type: 'authorization_code' })).toBe(1);
    expect(valueOf(families, 'courier_platform_client_auth_failures_total')).toBe(1);
    expect(valueOf(families, 'courier_platform_courier_calls_total', { operation: 'get_express_type', outcome: 'ok' })).toBe(1);
    // One courier call, one observation of its upstream time (the parser keeps a histogram's buckets only).
    const upstream = families.find((f) => f.name === 'courier_platform_courier_upstream_seconds');
    expect([upstream?.type, upstream?.metrics.map((m) => m.buckets?.['+Inf'])]).toEqual(['HISTOGRAM', ['1']]);
    expect(families.find((f) => f.name === 'courier_platform_store_errors_total')?.metrics).toEqual([]);

    // A second scrape sees the calls made since.
    await ping(host, token);
    expect(valueOf(await scrape(host), guarded, { client_id: CONFIDENTIAL.id, endpoint: PING, outcome: 'rejected' })).toBe(2);
  });

  it("writes into the host's own registry when given one", async () => {
    const registry = new Registry();
    const host = await startHost(adapter, { quota: {}, platform: platformOptions(registry) });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).status).toBe(200);
    const own = parsePrometheusTextFormat(await registry.metrics());
    expect(valueOf(own, 'courier_platform_guarded_calls_total', { client_id: CONFIDENTIAL.id, endpoint: PING, outcome: 'admitted' })).toBe(1);
  });
});

const NAMED = '/openapi/v1/orders/:id';
const APP_TOKEN = 'app-token';

/**
 * A host with a named guard on `/openapi/v1/orders/:id` and an unnamed guard on everything else
 * under `/openapi/v1` (each path its own endpoint). The host's own token check admits one token.
 */
function wildcardHost(adapter: 'express' | 'koa' | 'connect'): RequestListener {
  const options: CourierPlatformOptions = {
    courier: false,
    oauth: false,
    logger: silentLogger,
    admin: { token: TOKEN },
    quota: { verifyToken: (token) => (token === APP_TOKEN ? { clientId: 'shop', scope: [] } : undefined) },
  };
  const named = /^\/openapi\/v1\/orders\/[^/]+$/;
  const answer = (res: ServerResponse) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  };
  if (adapter === 'koa') {
    const app = new Koa();
    const platform = koaPlatform(options);
    const [one, any] = [platform.quota(NAMED), platform.quota()];
    app.use(platform);
    app.use(async (ctx, next) => {
      if (!ctx.path.startsWith('/openapi/v1/')) return next();
      await (named.test(ctx.path) ? one : any)(ctx, async () => {
        ctx.body = { ok: true };
      });
    });
    return app.callback();
  }
  if (adapter === 'connect') {
    const app = connect();
    const platform = connectPlatform(options);
    const [one, any] = [platform.quota(NAMED), platform.quota()];
    app.use(platform);
    app.use('/openapi/v1', (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => {
      const path = (req.url ?? '/').split('?')[0]!;
      (named.test(`/openapi/v1${path}`) ? one : any)(req, res, (error?: unknown) => (error ? next(error) : answer(res)));
    });
    return app;
  }
  const app = express();
  const platform = expressPlatform(options);
  app.use(platform);
  app.get(NAMED, platform.quota(NAMED), (_req, res) => void res.json({ ok: true }));
  app.use('/openapi/v1', platform.quota(), (_req, res) => void res.json({ ok: true }));
  return app;
}

/** GETs every path with the app's token, a few at a time over keep-alive connections; each must pass. */
async function callAll(origin: string, paths: readonly string[]): Promise<void> {
  const queue = [...paths];
  const worker = async () => {
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      const res = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${APP_TOKEN}` } });
      await res.arrayBuffer();
      expect(res.status, path).toBe(200);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** Every admitted call's count of `courier_platform_guarded_calls_total` by endpoint, as scraped. */
async function admittedByEndpoint(server: Served): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}/admin/metrics`, { headers: bearer(TOKEN) });
  const family = parsePrometheusTextFormat(await res.text()).find((f) => f.name === 'courier_platform_guarded_calls_total');
  expect(family).toBeDefined();
  const admitted = family!.metrics.filter((m) => m.labels!.client_id === 'shop' && m.labels!.outcome === 'admitted');
  return new Map(admitted.map((m) => [m.labels!.endpoint!, Number(m.value)]));
}

// The cap is core logic (src/metrics/prometheus.ts): one host fills it. What a host carries is the
// path its guard sees under a mount, so Koa and Connect, which hand it over differently, run a sample.
describe('the endpoint label cap', () => {
  it('on express: a named endpoint keeps its label after invented paths under an unnamed guard filled the cap; those share `other`', { timeout: 60_000 }, async () => {
    const server = await serve(wildcardHost('express'));
    served.push(server);
    const bogus = Array.from({ length: LABEL_VALUE_CAP + 200 }, (_, i) => `/openapi/v1/x${i}`);
    await callAll(server.url, bogus);
    await callAll(server.url, ['/openapi/v1/orders/41', '/openapi/v1/orders/42', '/openapi/v1/never-seen']);

    const at = await admittedByEndpoint(server);
    expect(at.get(NAMED)).toBe(2);
    // The unnamed share: the first LABEL_VALUE_CAP paths keep theirs, the rest are `other`.
    expect(at.get('/openapi/v1/x0')).toBe(1);
    expect(at.get(`/openapi/v1/x${LABEL_VALUE_CAP - 1}`)).toBe(1);
    expect(at.has(`/openapi/v1/x${LABEL_VALUE_CAP}`)).toBe(false);
    expect(at.get('other')).toBe(201);
    expect(at.size).toBe(LABEL_VALUE_CAP + 2);
  });

  it.each(['koa', 'connect'] as const)('on %s: an unnamed guard labels each full path, a named one its route', async (adapter) => {
    const server = await serve(wildcardHost(adapter));
    served.push(server);
    await callAll(server.url, ['/openapi/v1/x0', '/openapi/v1/x1', '/openapi/v1/x1', '/openapi/v1/orders/41', '/openapi/v1/orders/42']);
    expect(Object.fromEntries(await admittedByEndpoint(server))).toEqual({ [NAMED]: 2, '/openapi/v1/x0': 1, '/openapi/v1/x1': 2 });
  });
});
