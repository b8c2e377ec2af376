/**
 * No secret reaches the log or a response (docs/courier.md): app secrets, the Basic Auth value
 * and the computed sign, across successful calls, upstream failures and invalid requests. The log
 * is what a real pino logger wrote, failures' error stacks included.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { md5Signer } from '../../src/courier/signing.js';
import { startSandbox, type StartedSandbox } from '../../src/sandbox/index.js';
import { ADAPTERS } from '../support/apps.js';
import { OTHER_APP, SANDBOX_APP, SANDBOX_APPS, basic, orderBody, without } from '../support/courier.js';
import { capturingLogger } from '../support/logger.js';
import { serve, type Served } from '../support/net.js';
import { upstream500, upstreamBusinessError, upstreamStall, upstreamUnreachable, type FakeUpstream } from '../support/upstreams.js';

const WRONG_SECRET = 'wrong-secret-4f1c9a';

let sandbox: StartedSandbox;
let recording: FakeUpstream;
let failing: FakeUpstream[];

beforeAll(async () => {
  sandbox = await startSandbox({ apps: SANDBOX_APPS });
  recording = await upstreamBusinessError();
  failing = await Promise.all([upstreamStall(), upstream500(), upstreamUnreachable()]);
});

afterAll(async () => {
  await Promise.all([sandbox?.close(), recording?.close(), ...(failing ?? []).map((upstream) => upstream.close())]);
});

describe.each(ADAPTERS)('secrets on $name', (adapter) => {
  const logger = capturingLogger();
  const servers: Served[] = [];
  const responses: string[] = [];

  const otherAuth = basic(OTHER_APP.appId, OTHER_APP.appSecret);
  const wrongAuth = basic(SANDBOX_APP.appId, WRONG_SECRET);
  const configuredAuth = basic(SANDBOX_APP.appId, SANDBOX_APP.appSecret);
  let sign = '';

  // Only the stalling upstream gets the short deadline, so a busy machine cannot turn the
  // other calls into timeouts.
  const build = (upstreamUrl: string, timeoutMs = 5_000) =>
    serve(adapter.build({ logger, courier: { upstreamUrl, credentials: { ...SANDBOX_APP }, timeoutMs, retries: 1 } }));

  beforeAll(async () => {
    const [toSandbox, toRecording, ...toFailing] = await Promise.all([
      build(sandbox.url),
      build(recording.url),
      ...failing.map((upstream, index) => build(upstream.url, index === 0 ? 300 : 5_000)),
    ]);
    servers.push(toSandbox!, toRecording!, ...toFailing);

    const calls: request.Test[] = [];
    for (const target of [toSandbox!, ...toFailing]) {
      calls.push(
        request(target.server).get('/courier/get_balance'),
        request(target.server).get('/courier/get_coupon').set('authorization', otherAuth),
        request(target.server).get('/courier/get_express_tags').set('authorization', wrongAuth),
        request(target.server).post('/courier/create_order').set('authorization', otherAuth).send(orderBody()),
        request(target.server).post('/courier/create_order').set('authorization', otherAuth).send(without(orderBody(), 'goodsWeight')),
        request(target.server).post('/courier/cancel_order').set('authorization', wrongAuth).send({ orderId: 'SO1', sign: 'ABC' }),
        request(target.server).post('/courier/cancel_order').set('authorization', `Basic ${Buffer.from(`:${OTHER_APP.appSecret}`).toString('base64')}`),
        request(target.server).post('/courier/cancel_order').set('content-type', 'application/json').send('{"orderId":'),
      );
    }
    for (const res of await Promise.all(calls)) responses.push(res.text);

    // One call whose sign is known: the recording upstream shows what was sent.
    const res = await request(toRecording!.server).post('/courier/query_order_logs').set('authorization', otherAuth).send({ orderId: 'SO-42' });
    responses.push(res.text);
    sign = md5Signer({ orderId: 'SO-42', api: 'query_order_logs', appId: OTHER_APP.appId, version: '1.0' }, OTHER_APP.appSecret);
  });

  afterAll(async () => {
    await Promise.all(servers.map((served) => served.close()));
  });

  it('the sign computed with md5Signer is what the upstream received', () => {
    const sent = recording.bodies().filter((body) => (body as { orderId?: string }).orderId === 'SO-42');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.map((body) => (body as { sign: string }).sign)).toContain(sign);
  });

  it('the logger did receive entries, failures among them', () => {
    expect(logger.records.length).toBeGreaterThan(0);
    const warnings = logger.records.filter((record) => record.level === 'warn' || record.level === 'error');
    expect(warnings.length).toBeGreaterThan(0);
    const text = logger.text();
    // The three failing upstreams each produced a logged failure.
    expect(text).toMatch(/504|did not answer within/);
    expect(text).toMatch(/HTTP 500/);
    expect(text).toMatch(/could not be reached/);
    // Failures carry the error with its stack, so the checks below cover stacks too.
    expect(text).toMatch(/"err":\{"type":"\w*UpstreamError[^}]*"stack":"[^"]*\\n\s+at /);
  });

  it('logged errors keep their code: the masking of secrets leaves error codes alone', () => {
    const text = logger.text();
    expect(text).toMatch(/"err":\{"type":"\w*UpstreamError","message":"The courier platform could not be reached[^"]*","stack":"[^"]*","code":"upstream_error"/);
    expect(text).toContain('"code":"upstream_timeout"');
    expect(text).not.toContain('"code":"[redacted]"');
  });

  it('the log holds no app secret, no Basic Auth value and no sign', () => {
    const text = logger.text();
    for (const secret of [SANDBOX_APP.appSecret, OTHER_APP.appSecret, WRONG_SECRET]) expect(text).not.toContain(secret);
    for (const auth of [otherAuth, wrongAuth, configuredAuth]) expect(text).not.toContain(auth.slice('Basic '.length));
    expect(sign).toMatch(/^[0-9A-F]{32}$/);
    expect(text).not.toContain(sign);
    expect(text.toLowerCase()).not.toContain(sign.toLowerCase());
  });

  it('no response body holds a secret, a Basic Auth value or the sign', () => {
    expect(responses.length).toBeGreaterThan(30);
    const text = responses.join('\n');
    for (const secret of [SANDBOX_APP.appSecret, OTHER_APP.appSecret, WRONG_SECRET]) expect(text).not.toContain(secret);
    for (const auth of [otherAuth, wrongAuth, configuredAuth]) expect(text).not.toContain(auth.slice('Basic '.length));
    expect(text).not.toContain(sign);
  });
});
