/**
 * The document's promises about the courier proxy, kept: each operation's example, sent as the
 * document says, gets an answer that validates against the response documented for its status.
 * Against the bundled sandbox upstream, on every adapter.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COURIER_OPERATION_NAMES } from '../../src/courier/operations.js';
import { ADAPTERS } from '../support/apps.js';
import { sandboxUpstream } from '../support/courier.js';
import type { Served } from '../support/net.js';
import { fetchDocument, fullOptions, serveHost, type ApiDocument, type Operation } from './support.js';

const upstream = sandboxUpstream();
// Formats (uri, date-time) are the platform's to check; the contract is the shape.
const ajv = new Ajv2020({ strict: false, validateFormats: false });

function courierOperation(document: ApiDocument, name: string): { method: string; operation: Operation } {
  const item = document.paths[`/courier/${name}`] ?? {};
  const [method, operation] = Object.entries(item)[0] ?? [];
  if (!method || !operation) throw new Error(`${name} is not in the document`);
  return { method, operation };
}

describe.each(ADAPTERS)('the courier operations keep the document on $name', (adapter) => {
  let served: Served;
  let document: ApiDocument;

  beforeAll(async () => {
    served = await serveHost(adapter, fullOptions(upstream().url));
    document = await fetchDocument(served);
  });
  afterAll(() => served?.close());

  /** Sends `body` (or the documented example) and checks the answer against the documented response of its status. */
  async function call(name: string, body?: object): Promise<{ status: number; body: { code: number; data: Record<string, unknown> } }> {
    const { method, operation } = courierOperation(document, name);
    const media = operation.requestBody?.content['application/json'];
    const sent = body ?? (media?.example as object | undefined);
    const res =
      method === 'get' ? await request(served.server).get(`/courier/${name}`) : await request(served.server).post(`/courier/${name}`).send(sent);
    const schema = operation.responses[String(res.status)]?.content?.['application/json']?.schema;
    expect(schema, `${name} answered ${res.status}, which the document does not list`).toBeDefined();
    const valid = ajv.validate(schema!, res.body);
    expect(valid, `${name} ${res.status} ${JSON.stringify(res.body)}: ${ajv.errorsText()}`).toBe(true);
    return res;
  }

  it('documents every operation, with an example for each that takes a body', () => {
    for (const name of COURIER_OPERATION_NAMES) {
      const { method, operation } = courierOperation(document, name);
      if (method === 'post') expect(operation.requestBody?.content['application/json']?.example, name).toBeDefined();
    }
  });

  it.each(COURIER_OPERATION_NAMES)('%s: its example gets a documented answer', async (name) => {
    const res = await call(name);
    expect(res.status).toBe(200);
  });

  it('the examples that name no order of the caller are accepted upstream (code 0)', async () => {
    const accepted = COURIER_OPERATION_NAMES.filter((name) => !['cancel_order', 'query_order_logs', 'query_pre_order_status'].includes(name));
    for (const name of accepted) expect([name, (await call(name)).body.code]).toEqual([name, 0]);
  });

  it('the examples naming an order, given one of the caller\'s, get the documented data', async () => {
    const { orderId } = (await call('create_order')).body.data as { orderId: string };
    const { preorderId } = (await call('create_pre_order')).body.data as { preorderId: string };
    expect((await call('query_order_logs', { orderId })).body.code).toBe(0);
    expect((await call('cancel_order', { orderId, cancelMemo: 'changed my mind' })).body.code).toBe(0);
    expect((await call('query_pre_order_status', { preorderId })).body.code).toBe(0);
  });

  it('an invalid body gets the documented 400', async () => {
    const res = await call('create_order', { orderTypeID: 2 });
    expect(res.status).toBe(400);
  });
});
