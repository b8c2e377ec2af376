/**
 * Upstream failures as the caller sees them, on every adapter (docs/courier.md): a business error is
 * HTTP 200 / code 1, a broken upstream 502, a silent one 504; reads are retried, writes are not.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { ADAPTERS } from '../support/apps.js';
import { SANDBOX_APP, envelope, expectNothingInternal, orderBody } from '../support/courier.js';
import { serve, type Served } from '../support/net.js';
import {
  upstream404Success,
  upstream500,
  upstream503,
  upstreamBusinessError,
  upstreamDeep,
  upstreamEcho,
  upstreamHtml,
  upstreamHuge,
  upstreamInfiniteCode,
  upstreamStall,
  upstreamUnreachable,
  type FakeUpstream,
} from '../support/upstreams.js';

const TIMEOUT_MS = 300;

const upstreams = {} as Record<
  'business' | 'deep' | 'echo' | 'http404' | 'http500' | 'html' | 'huge' | 'hugeAnnounced' | 'infinite' | 'http503' | 'stall' | 'unreachable',
  FakeUpstream
>;

beforeAll(async () => {
  [
    upstreams.business,
    upstreams.deep,
    upstreams.echo,
    upstreams.http404,
    upstreams.http500,
    upstreams.html,
    upstreams.huge,
    upstreams.hugeAnnounced,
    upstreams.infinite,
    upstreams.http503,
    upstreams.stall,
    upstreams.unreachable,
  ] = await Promise.all([
    upstreamBusinessError(),
    upstreamDeep(100_000),
    upstreamEcho(SANDBOX_APP.appSecret),
    upstream404Success(),
    upstream500(),
    upstreamHtml(),
    upstreamHuge({ announced: false }),
    upstreamHuge({ announced: true }),
    upstreamInfiniteCode(),
    upstream503(),
    upstreamStall(),
    upstreamUnreachable(),
  ]);
});

afterAll(async () => {
  await Promise.all(Object.values(upstreams).map((upstream) => upstream.close()));
});

describe.each(ADAPTERS)('courier proxy on $name, upstream failures', (adapter) => {
  const apps = {} as Record<keyof typeof upstreams, Served>;

  beforeAll(async () => {
    await Promise.all(
      (Object.keys(upstreams) as (keyof typeof upstreams)[]).map(async (name) => {
        apps[name] = await serve(
          adapter.build({
            logger: silentLogger,
            // Only the stalling upstream gets the short deadline; the others keep the default.
            courier: { upstreamUrl: upstreams[name].url, credentials: { ...SANDBOX_APP }, ...(name === 'stall' ? { timeoutMs: TIMEOUT_MS } : {}) },
          }),
        );
      }),
    );
  });

  afterAll(async () => {
    await Promise.all(Object.values(apps).map((served) => served.close()));
  });

  it('a business error: HTTP 200, code 1, the upstream message kept, data.upstreamCode', async () => {
    const before = upstreams.business.hits();
    const res = await request(apps.business.server).post('/courier/query_order_logs').send({ orderId: 'SO1' });
    const body = envelope(res, 200, 1);
    expect(body.message).toBe('bad thing');
    expect(body.data).toEqual({ upstreamCode: 40004 });
    expect(upstreams.business.hits() - before).toBe(1);
    expectNothingInternal(res.text);
  });

  it('the upstream receives the signed body: business fields plus api, appId, version, sign', async () => {
    await request(apps.business.server).post('/courier/cancel_order').send({ orderId: 'SO-signed', cancelMemo: 'late' });
    const last = upstreams.business.bodies().at(-1) as Record<string, unknown>;
    expect(last).toMatchObject({ orderId: 'SO-signed', cancelMemo: 'late', api: 'cancel_order', appId: SANDBOX_APP.appId, version: '1.0' });
    expect(last.sign).toMatch(/^[0-9A-F]{32}$/);
    expect(JSON.stringify(last)).not.toContain(SANDBOX_APP.appSecret);
  });

  it('an upstream repeating the app secret or the sign: both are [redacted] in the message and in data', async () => {
    const refused = await request(apps.echo.server).post('/courier/cancel_order').send({ orderId: 'SO-echo' });
    const sent = upstreams.echo.bodies().at(-1) as { sign: string };
    const refusal = envelope(refused, 200, 1);
    expect(refusal.message).toBe('sign [redacted] does not match api=cancel_order&key=[redacted]');
    expect(refusal.data).toEqual({ upstreamCode: 40001 });

    const echoed = await request(apps.echo.server).post('/courier/cancel_order').send({ orderId: 'echo-ok' });
    const success = envelope(echoed, 200, 0);
    expect(success.data).toEqual({
      received: { orderId: 'echo-ok', api: 'cancel_order', appId: SANDBOX_APP.appId, version: '1.0', sign: '[redacted]' },
      'key=[redacted]': true,
    });
    for (const res of [refused, echoed]) {
      expect(res.text).not.toContain(SANDBOX_APP.appSecret);
      expect(res.text.toUpperCase()).not.toContain(sent.sign);
    }
  });

  it('JSON nested deeper than 64 levels -> 502, not a 500 when writing it back', async () => {
    const res = await request(apps.deep.server).get('/courier/get_address');
    const body = envelope(res, 502, 1);
    expect(body.message).toContain('nested');
    expectNothingInternal(res.text);
  });

  it('a code that is not a finite number (1e999) -> 502, never an upstreamCode of null', async () => {
    const res = await request(apps.infinite.server).post('/courier/cancel_order').send({ orderId: 'SO1' });
    envelope(res, 502, 1);
    expectNothingInternal(res.text);
  });

  it('HTTP 500 -> 502', async () => {
    const res = await request(apps.http500.server).get('/courier/get_balance');
    envelope(res, 502, 1);
    expectNothingInternal(res.text);
  });

  it('code 0 on an HTTP 404 -> 502, never passed on as a success', async () => {
    const res = await request(apps.http404.server).post('/courier/query_order_logs').send({ orderId: 'SO1' });
    const body = envelope(res, 502, 1);
    expect(body.message).toContain('HTTP 404');
    expect(res.text).not.toContain('SO1');
    expectNothingInternal(res.text);
  });

  it('a non-JSON (HTML) answer -> 502, without the HTML', async () => {
    const res = await request(apps.html.server).post('/courier/query_order_logs').send({ orderId: 'SO1' });
    envelope(res, 502, 1);
    expect(res.text).not.toContain('nginx');
    expectNothingInternal(res.text);
  });

  it('an answer larger than 10 MiB -> 502 saying so; a read is attempted once, as it would be as large again', async () => {
    for (const upstream of ['huge', 'hugeAnnounced'] as const) {
      const before = upstreams[upstream].hits();
      const res = await request(apps[upstream].server).get('/courier/get_express_type');
      const body = envelope(res, 502, 1);
      expect(body.message, upstream).toBe("The courier platform's answer was larger than 10 MiB");
      expectNothingInternal(res.text);
      expect(upstreams[upstream].hits() - before, upstream).toBe(1);
    }
  });

  it('an unreachable upstream -> 502', async () => {
    for (const call of [
      request(apps.unreachable.server).get('/courier/get_balance'),
      request(apps.unreachable.server).post('/courier/create_order').send(orderBody()),
    ]) {
      const res = await call;
      envelope(res, 502, 1);
      expectNothingInternal(res.text);
    }
  });

  it('503 -> 502; a read is attempted 3 times (retries 2), a create_order once', async () => {
    let before = upstreams.http503.hits();
    const read = await request(apps.http503.server).get('/courier/get_express_type');
    envelope(read, 502, 1);
    expectNothingInternal(read.text);
    expect(upstreams.http503.hits() - before).toBe(3);

    before = upstreams.http503.hits();
    const write = await request(apps.http503.server).post('/courier/create_order').send(orderBody());
    envelope(write, 502, 1);
    expect(upstreams.http503.hits() - before).toBe(1);
  });

  it(`a stalled upstream -> 504 after the ${TIMEOUT_MS} ms deadline, well under 2 s`, async () => {
    const before = upstreams.stall.hits();
    const started = performance.now();
    const res = await request(apps.stall.server).post('/courier/query_pre_order_status').send({ preorderId: 'PO1' });
    const elapsed = performance.now() - started;
    const body = envelope(res, 504, 1);
    expect(body.message).toContain(String(TIMEOUT_MS));
    expectNothingInternal(res.text);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(2000);
    expect(upstreams.stall.hits() - before).toBeGreaterThanOrEqual(1);
  });
});
