/**
 * An optional field sent as an empty string (or only spaces) counts as not sent: the upstream
 * receives the body without it, signed over the remaining fields, which is also the sign of the
 * body with the empty value, since the canonical string drops empty values. A required field
 * sent empty is a 400 naming it, and nothing is forwarded.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { md5Signer } from '../../src/courier/signing.js';
import { ADAPTERS } from '../support/apps.js';
import { SANDBOX_APP, envelope, okData, orderBody, sandboxUpstream, without } from '../support/courier.js';
import { serve, type Served } from '../support/net.js';
import { upstreamBusinessError, type FakeUpstream } from '../support/upstreams.js';

const sandbox = sandboxUpstream();
let recording: FakeUpstream;

beforeAll(async () => {
  recording = await upstreamBusinessError();
});
afterAll(async () => {
  await recording?.close();
});

type Body = Record<string, unknown> & { sign: string };

describe.each(ADAPTERS)('empty fields on $name', (adapter) => {
  let toRecording: Served;
  let toSandbox: Served;

  beforeAll(async () => {
    [toRecording, toSandbox] = await Promise.all([
      serve(adapter.build({ logger: silentLogger, courier: { upstreamUrl: recording.url, credentials: { ...SANDBOX_APP } } })),
      serve(adapter.build({ logger: silentLogger, courier: { upstreamUrl: sandbox().url, credentials: { ...SANDBOX_APP } } })),
    ]);
  });
  afterAll(async () => {
    await Promise.all([toRecording, toSandbox].map((served) => served?.close()));
  });

  /** Sends to the recording upstream and returns the body it received. */
  async function received(op: string, body: Record<string, unknown>): Promise<Body> {
    const marker = `${adapter.name}-${op}-${Math.random()}`;
    await request(toRecording.server).post(`/courier/${op}`).send({ ...body, orderId: marker });
    const sent = recording.bodies().filter((entry) => (entry as { orderId?: string }).orderId === marker);
    expect(sent).toHaveLength(1);
    return sent[0] as Body;
  }

  it('cancel_order with cancelMemo "" and pushCompanyId "  ": forwarded without them, signed over the rest', async () => {
    const body = await received('cancel_order', { cancelMemo: '', pushCompanyId: '  ' });
    expect(Object.keys(body).sort()).toEqual(['api', 'appId', 'orderId', 'sign', 'version']);
    const fields = without(body, 'sign');
    expect(body.sign).toBe(md5Signer(fields, SANDBOX_APP.appSecret));
    // The same sign as with the empty value present: the canonical string leaves it out.
    expect(body.sign).toBe(md5Signer({ ...fields, cancelMemo: '' }, SANDBOX_APP.appSecret));
  });

  it('query_order_logs with sellerOrderNo "": forwarded without it', async () => {
    const body = await received('query_order_logs', { sellerOrderNo: '' });
    expect(Object.keys(body).sort()).toEqual(['api', 'appId', 'orderId', 'sign', 'version']);
    expect(body.sign).toBe(md5Signer(without(body, 'sign'), SANDBOX_APP.appSecret));
  });

  it('create_order with empty optional fields: the sandbox verifies the signature and creates the order', async () => {
    const order = orderBody(undefined, { sellerOrderNo: '', sellerQrcode: '', createMemo: ' ', expressTagIds: '', goods: [{ goodsName: 'Tea', goodsDesc: '' }] });
    const created = okData<{ orderId: string }>(await request(toSandbox.server).post('/courier/create_order').send(order));
    expect(created.orderId).toMatch(/\S/);
  });

  it('a required field sent empty: 400 naming it, nothing forwarded', async () => {
    const before = recording.hits();
    const res = await request(toRecording.server).post('/courier/cancel_order').send({ orderId: '', cancelMemo: '' });
    const result = envelope(res, 400, 1);
    expect(result.data).toEqual({ errors: [{ field: 'orderId', rule: 'min_length', message: expect.any(String) }] });
    const order = await request(toRecording.server).post('/courier/create_order').send(orderBody(undefined, { customerContacts: ' ' }));
    expect(envelope(order, 400, 1).data).toEqual({ errors: [{ field: 'customerContacts', rule: 'min_length', message: expect.any(String) }] });
    expect(recording.hits()).toBe(before);
  });
});
