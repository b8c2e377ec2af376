/**
 * `GET /admin/metrics` (docs/operator.md#metrics), through HTTP on every adapter: parsed as the
 * Prometheus text format by a parser, and its counters follow the calls made (guarded calls
 * admitted and refused, a token issued, a failed client authentication, a courier call).
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_DEFAULT_APP_ID, SANDBOX_DEFAULT_APP_SECRET } from '../../src/sandbox/sandbox.js';
import { accessToken, ADAPTER_NAMES, bearer, closeHosts, CONFIDENTIAL, PING, ping, startHost, type QuotaHost } from '../http/quota-helpers.js';

afterEach(closeHosts);

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
