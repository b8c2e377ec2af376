/**
 * What the proxy does with a request before (or instead of) calling the upstream: validation,
 * forbidden fields, body handling, routing, fall-through to the host, host body parsers, and the
 * option check at construction (docs/courier.md). The table of refused requests is the core's
 * work, so it runs whole on one adapter, and a sample of it (every kind of refusal) on each
 * adapter; everything an adapter could change (bodies, routing, host parsers) runs on all.
 *
 * Whole though past 350 lines: the per-adapter block starts its three apps (default, bodyLimit
 * 1024, a host body parser) once for the sample of refusals and for bodies, routing and host
 * parsers alike; split, every adapter's apps would start once per file.
 */
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { ADAPTERS, HELLO } from '../support/apps.js';
import {
  CREATE_ORDER_REQUIRED,
  GET_OPERATIONS,
  SANDBOX_APP,
  envelope,
  expectNothingInternal,
  okData,
  orderBody,
  preOrderBody,
  sandboxUpstream,
  todayUtc,
  without,
} from '../support/courier.js';
import { rawPost, serve, type Served } from '../support/net.js';

const upstream = sandboxUpstream();

// ---------------------------------------------------------------------------------------------
// The table of invalid bodies
// ---------------------------------------------------------------------------------------------

interface Invalid {
  what: string;
  op: string;
  body: unknown;
  field: string;
  rule: string;
}


const BILLING_FEE_REQUIRED = [
  'orderTypeId',
  'sendTypeId',
  'fetchTypeId',
  'paymentId',
  'expressTypeId',
  'customerMansionId',
  'customerFloorId',
  'myMansionId',
  'myFloorId',
  'goodsWeight',
];

const CREATE_PRE_ORDER_REQUIRED = [
  'orderTypeId',
  'expressTypeId',
  'customerContacts',
  'customerMobileNumber',
  'customerAddress',
  'myContacts',
  'myMobileNumber',
  'myAddress',
  'goodsWeight',
];

const order = orderBody();
const agentOrder = orderBody(undefined, { paymentId: 2 });
const estimate = {
  orderTypeId: 2,
  sendTypeId: 21,
  fetchTypeId: 11,
  paymentId: 1,
  expressTypeId: 1,
  customerMansionId: 1,
  customerFloorId: 101,
  myMansionId: 2,
  myFloorId: 201,
  goodsWeight: 1,
};
const preOrder = preOrderBody();
const today = todayUtc();
const dates = { startDate: today, endDate: today };

const INVALID: Invalid[] = [
  ...CREATE_ORDER_REQUIRED.map((field) => ({ what: `without ${field}`, op: 'create_order', body: without(order, field), field, rule: 'required' })),
  ...BILLING_FEE_REQUIRED.map((field) => ({ what: `without ${field}`, op: 'billing_fee', body: without(estimate, field), field, rule: 'required' })),
  ...CREATE_PRE_ORDER_REQUIRED.map((field) => ({ what: `without ${field}`, op: 'create_pre_order', body: without(preOrder, field), field, rule: 'required' })),
  { what: 'without paymentId', op: 'create_agent_order', body: without(agentOrder, 'paymentId'), field: 'paymentId', rule: 'required' },
  { what: 'without orderId', op: 'cancel_order', body: { cancelMemo: 'oops' }, field: 'orderId', rule: 'required' },
  { what: 'without startDate', op: 'query_account_details', body: { endDate: today }, field: 'startDate', rule: 'required' },
  { what: 'without endDate', op: 'query_account_details', body: { startDate: today }, field: 'endDate', rule: 'required' },
  { what: 'without preorderId', op: 'query_pre_order_status', body: { pushCompanyId: 'C1' }, field: 'preorderId', rule: 'required' },
  { what: 'empty body', op: 'query_pre_order_status', body: undefined, field: 'preorderId', rule: 'required' },

  // wrong types
  { what: 'building id as a string', op: 'create_order', body: { ...order, customerMansionId: '1' }, field: 'customerMansionId', rule: 'type' },
  { what: 'weight as a string', op: 'create_order', body: { ...order, goodsWeight: 'heavy' }, field: 'goodsWeight', rule: 'type' },
  { what: 'company as a number', op: 'create_order', body: { ...order, customerCname: 42 }, field: 'customerCname', rule: 'type' },
  { what: 'goods not an array', op: 'create_order', body: { ...order, goods: 'Tea' }, field: 'goods', rule: 'type' },
  { what: 'sellerOrderNo null', op: 'create_order', body: { ...order, sellerOrderNo: null }, field: 'sellerOrderNo', rule: 'type' },
  { what: 'fractional floor id', op: 'create_order', body: { ...order, customerFloorId: 101.5 }, field: 'customerFloorId', rule: 'integer' },
  { what: 'negative weight', op: 'create_order', body: { ...order, goodsWeight: -1 }, field: 'goodsWeight', rule: 'min' },
  { what: 'blank contact', op: 'create_order', body: { ...order, myContacts: '   ' }, field: 'myContacts', rule: 'min_length' },
  { what: 'phone with letters', op: 'create_order', body: { ...order, customerMobileNumber: 'call me' }, field: 'customerMobileNumber', rule: 'format' },
  { what: 'orderId as a number', op: 'cancel_order', body: { orderId: 12345 }, field: 'orderId', rule: 'type' },
  { what: 'preorderId as a boolean', op: 'query_pre_order_status', body: { preorderId: true }, field: 'preorderId', rule: 'type' },

  // enumerations (docs/courier.md)
  { what: 'orderTypeId 3', op: 'create_order', body: { ...order, orderTypeId: 3 }, field: 'orderTypeId', rule: 'enum' },
  { what: "orderTypeId '2' (a string)", op: 'create_order', body: { ...order, orderTypeId: '2' }, field: 'orderTypeId', rule: 'enum' },
  { what: 'sendTypeId 23', op: 'create_order', body: { ...order, sendTypeId: 23 }, field: 'sendTypeId', rule: 'enum' },
  { what: 'fetchTypeId 14', op: 'create_order', body: { ...order, fetchTypeId: 14 }, field: 'fetchTypeId', rule: 'enum' },
  { what: 'paymentId 2 on a normal order', op: 'create_order', body: { ...order, paymentId: 2 }, field: 'paymentId', rule: 'enum' },
  { what: 'paymentId 11 on an agent order', op: 'create_agent_order', body: { ...agentOrder, paymentId: 11 }, field: 'paymentId', rule: 'enum' },
  { what: 'paymentId 12 on an agent order', op: 'create_agent_order', body: { ...agentOrder, paymentId: 12 }, field: 'paymentId', rule: 'enum' },
  { what: 'returnPrintImg 2', op: 'create_order', body: { ...order, returnPrintImg: 2 }, field: 'returnPrintImg', rule: 'enum' },
  { what: 'billing_fee sendTypeId 20', op: 'billing_fee', body: { ...estimate, sendTypeId: 20 }, field: 'sendTypeId', rule: 'enum' },
  { what: 'pre-order orderTypeId 0', op: 'create_pre_order', body: { ...preOrder, orderTypeId: 0 }, field: 'orderTypeId', rule: 'enum' },

  // fetch type only for one order type
  { what: 'fetchTypeId 12 with orderTypeId 1', op: 'create_order', body: { ...order, orderTypeId: 1, fetchTypeId: 12 }, field: 'fetchTypeId', rule: 'fetch_type_for_order_type' },
  { what: 'fetchTypeId 13 with orderTypeId 2', op: 'create_order', body: { ...order, orderTypeId: 2, fetchTypeId: 13 }, field: 'fetchTypeId', rule: 'fetch_type_for_order_type' },
  { what: 'agent: fetchTypeId 12 with orderTypeId 1', op: 'create_agent_order', body: { ...agentOrder, orderTypeId: 1, fetchTypeId: 12 }, field: 'fetchTypeId', rule: 'fetch_type_for_order_type' },
  { what: 'estimate: fetchTypeId 13 with orderTypeId 2', op: 'billing_fee', body: { ...estimate, orderTypeId: 2, fetchTypeId: 13 }, field: 'fetchTypeId', rule: 'fetch_type_for_order_type' },

  // goods lines
  { what: 'goods line without goodsName', op: 'create_order', body: { ...order, goods: [{ goodsNum: 1, goodsAmount: 3 }] }, field: 'goods[0].goodsName', rule: 'required' },
  { what: 'second goods line without goodsName', op: 'create_agent_order', body: { ...agentOrder, goods: [{ goodsName: 'Tea' }, { goodsDesc: 'cup' }] }, field: 'goods[1].goodsName', rule: 'required' },

  // query_order_logs: orderId or sellerOrderNo
  { what: 'neither orderId nor sellerOrderNo', op: 'query_order_logs', body: {}, field: 'orderId', rule: 'one_of_required' },
  { what: 'only pushCompanyId', op: 'query_order_logs', body: { pushCompanyId: 'C1' }, field: 'orderId', rule: 'one_of_required' },

  // dates
  { what: 'startDate with slashes', op: 'query_account_details', body: { ...dates, startDate: '2026/01/05' }, field: 'startDate', rule: 'format' },
  { what: 'endDate with a time', op: 'query_account_details', body: { ...dates, endDate: `${today}T00:00:00Z` }, field: 'endDate', rule: 'format' },
  { what: 'startDate February 30', op: 'query_account_details', body: { startDate: '2026-02-30', endDate: '2026-03-02' }, field: 'startDate', rule: 'date' },
  { what: 'endDate February 29 of a common year', op: 'query_account_details', body: { startDate: '2025-02-01', endDate: '2025-02-29' }, field: 'endDate', rule: 'date' },
  { what: 'startDate after endDate', op: 'query_account_details', body: { startDate: '2026-03-02', endDate: '2026-03-01' }, field: 'endDate', rule: 'date_range' },

  // unknown fields
  { what: 'an unknown field', op: 'create_order', body: { ...order, colour: 'red' }, field: 'colour', rule: 'unknown_field' },
  { what: 'an unknown field in a goods line', op: 'create_order', body: { ...order, goods: [{ goodsName: 'Tea', colour: 'red' }] }, field: 'goods[0].colour', rule: 'unknown_field' },
  { what: 'an unknown field', op: 'cancel_order', body: { orderId: 'SO1', reason: 'x' }, field: 'reason', rule: 'unknown_field' },
  { what: 'an unknown field', op: 'query_pre_order_status', body: { preorderId: 'PO1', verbose: true }, field: 'verbose', rule: 'unknown_field' },

  // half a surrogate pair is no character (RFC 8259 8.2)
  { what: 'a lone surrogate escape in a name', op: 'create_order', body: { ...order, customerContacts: 'Li\ud800' }, field: 'customerContacts', rule: 'format' },
  { what: 'a lone surrogate escape in a goods line', op: 'create_order', body: { ...order, goods: [{ goodsName: '\udfffTea' }] }, field: 'goods[0].goodsName', rule: 'format' },
  { what: 'a lone surrogate escape in an id', op: 'cancel_order', body: { orderId: 'SO1\ud83d' }, field: 'orderId', rule: 'format' },
];

const FORBIDDEN = ['api', 'appId', 'version', 'sign'] as const;

const NOT_AN_OBJECT: readonly (readonly [string, string])[] = [
  ['a JSON array', '[{"orderId":"SO1"}]'],
  ['a JSON string', '"SO1"'],
  ['a JSON number', '42'],
  ['JSON null', 'null'],
];

interface RefusalTable {
  invalid: readonly Invalid[];
  /** GET operations sent with a query parameter. */
  getOperations: readonly string[];
  forbidden: readonly string[];
  notAnObject: readonly (readonly [string, string])[];
}

/** One row of each kind of refusal: a missing field, a wrong type, an enumeration, a date range, an unknown field, a nested field. */
const SAMPLE: RefusalTable = {
  invalid: [
    ...['required', 'type', 'enum', 'date_range', 'unknown_field'].map((rule) => INVALID.find((row) => row.rule === rule)!),
    INVALID.find((row) => row.field === 'goods[0].goodsName')!,
  ],
  getOperations: ['get_balance'],
  forbidden: ['sign'],
  notAnObject: NOT_AN_OBJECT.slice(0, 1),
};

/** The requests the proxy refuses with 400 before calling the upstream, against `app()`. */
function refusals(app: () => Served, table: RefusalTable): void {
  describe('validation (400, code 1, names the field and the rule)', () => {
    it.each(table.invalid)('$op $what -> $field / $rule', async ({ op, body, field, rule }) => {
      const call = request(app().server).post(`/courier/${op}`);
      const res = await (body === undefined ? call : call.send(body as object));
      const result = envelope(res, 400, 1);
      expect(result.message).toContain(field);
      expect((result.data as { errors: unknown[] }).errors).toEqual(
        expect.arrayContaining([{ field, rule, message: expect.any(String) }]),
      );
    });

    it.each(table.getOperations)('GET %s with a query parameter -> 400 naming it', async (op) => {
      const res = await request(app().server).get(`/courier/${op}?page=2`);
      const result = envelope(res, 400, 1);
      expect(result.message).toContain('page');
      expect((result.data as { errors: unknown[] }).errors).toEqual([expect.objectContaining({ field: 'page', rule: 'unknown_field' })]);
    });

    it('a body of 3,000 unknown fields -> 400 listing the first 100 and counting the rest in the message', async () => {
      const body = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`field${i}`, 'x']));
      const res = await request(app().server).post('/courier/cancel_order').send({ orderId: 'SO1', ...body });
      const result = envelope(res, 400, 1);
      expect((result.data as { errors: unknown[] }).errors).toHaveLength(100);
      expect(result.message).toMatch(/\(and 2999 more\)$/);
      // The answer stays smaller than the body it judges.
      expect(JSON.stringify(res.body).length).toBeLessThan(JSON.stringify(body).length);
    });

    it.each(table.notAnObject)('%s as the body -> 400', async (_what, text) => {
      const res = await request(app().server).post('/courier/cancel_order').set('content-type', 'application/json').send(text);
      envelope(res, 400, 1);
    });
  });

  describe('forbidden caller fields (400, code 1)', () => {
    it.each(table.forbidden)('%s in a POST body', async (field) => {
      const res = await request(app().server).post('/courier/query_order_logs').send({ orderId: 'SO1', [field]: 'x' });
      expect(envelope(res, 400, 1).message).toContain(field);
    });

    it.each(table.forbidden)('%s in a GET query', async (field) => {
      const res = await request(app().server).get(`/courier/get_balance?${field}=x`);
      expect(envelope(res, 400, 1).message).toContain(field);
    });
  });
}

const [WHOLE_TABLE_ADAPTER] = ADAPTERS;

describe(`courier proxy on ${WHOLE_TABLE_ADAPTER!.name}: the whole table of refused requests`, () => {
  let app: Served;
  beforeAll(async () => {
    app = await serve(WHOLE_TABLE_ADAPTER!.build({ logger: silentLogger, courier: { upstreamUrl: upstream().url, credentials: { ...SANDBOX_APP } } }));
  });
  afterAll(() => app?.close());

  refusals(() => app, { invalid: INVALID, getOperations: GET_OPERATIONS, forbidden: FORBIDDEN, notAnObject: NOT_AN_OBJECT });
});

// ---------------------------------------------------------------------------------------------

describe.each(ADAPTERS)('courier proxy on $name', (adapter) => {
  /** Configured credentials, default body limit. */
  let app: Served;
  /** bodyLimit 1024. */
  let small: Served;
  /** The host mounted its own JSON body parser before the platform. */
  let parsed: Served;

  beforeAll(async () => {
    const courier = { upstreamUrl: upstream().url, credentials: { ...SANDBOX_APP } };
    [app, small, parsed] = await Promise.all([
      serve(adapter.build({ logger: silentLogger, courier })),
      serve(adapter.build({ logger: silentLogger, courier, bodyLimit: 1024 })),
      serve(adapter.build({ logger: silentLogger, courier }, { hostParser: true })),
    ]);
  });

  afterAll(async () => {
    await Promise.all([app, small, parsed].map((served) => served?.close()));
  });

  describe('a sample of the refused requests', () => refusals(() => app, SAMPLE));

  describe('bodies', () => {
    it('the valid bodies the table starts from are accepted', async () => {
      okData(await request(app.server).post('/courier/create_order').send(orderBody()));
      okData(await request(app.server).post('/courier/create_agent_order').send(orderBody(undefined, { paymentId: 2 })));
      okData(await request(app.server).post('/courier/billing_fee').send(estimate));
      okData(await request(app.server).post('/courier/create_pre_order').send(preOrderBody()));
      okData(await request(app.server).post('/courier/query_account_details').send(dates));
    });

    it('a body sent as text/plain -> 415', async () => {
      const res = await request(app.server).post('/courier/cancel_order').set('content-type', 'text/plain').send('{"orderId":"SO1"}');
      const result = envelope(res, 415, 1);
      expect(result.message).toMatch(/application\/json/);
    });

    it('a JSON body without Content-Type -> 415', async () => {
      const res = await request(app.server).post('/courier/cancel_order').set('content-type', '').send('{"orderId":"SO1"}');
      envelope(res, 415, 1);
    });

    it('RFC 8259 8.1: a body that is not UTF-8 -> 400, never passed on with its bytes replaced', async () => {
      const bytes = Buffer.concat([Buffer.from('{"orderId":"SO1","cancelMemo":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
      const res = await rawPost(app.server, '/courier/cancel_order', { 'content-type': 'application/json' }, [bytes], 'content-length');
      const result = envelope(res, 400, 1);
      expect(result.message).toMatch(/UTF-8/);
    });

    it('RFC 9110 15.5.16: a compressed body (Content-Encoding: gzip) -> 415 naming the coding', async () => {
      const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
      const res = await rawPost(app.server, '/courier/cancel_order', headers, [gzipSync('{"orderId":"SO1"}')], 'content-length');
      const result = envelope(res, 415, 1);
      expect(result.message).toMatch(/Content-Encoding gzip/);
      // RFC 7694 3: the codings the server takes.
      expect(res.headers['accept-encoding']).toBe('identity');
    });

    it('malformed JSON -> 400', async () => {
      const res = await request(app.server).post('/courier/cancel_order').set('content-type', 'application/json').send('{"orderId": "SO1",');
      const result = envelope(res, 400, 1);
      expect(result.message).toMatch(/json/i);
      expectNothingInternal(res.text);
    });
  });

  describe('body size (bodyLimit 1024)', () => {
    const big = JSON.stringify({ orderId: 'SO1', cancelMemo: 'x'.repeat(1500) });

    it('a body under the limit is read', async () => {
      const body = orderBody();
      expect(JSON.stringify(body).length).toBeLessThan(1024);
      okData(await request(small.server).post('/courier/create_order').send(body));
    });

    const json = { 'content-type': 'application/json' };
    const pieces = (text: string) => [text.slice(0, 400), text.slice(400, 800), text.slice(800)];

    it('a larger body with Content-Length -> 413', async () => {
      envelope(await request(small.server).post('/courier/cancel_order').set(json).send(big), 413, 1);
      envelope(await rawPost(small.server, '/courier/cancel_order', json, pieces(big), 'content-length'), 413, 1);
    });

    it('a larger chunked body without Content-Length -> 413', async () => {
      envelope(await rawPost(small.server, '/courier/cancel_order', json, pieces(big), 'chunked'), 413, 1);
    });

    it('a chunked body under the limit is read', async () => {
      const res = await rawPost(small.server, '/courier/create_order', json, pieces(JSON.stringify(orderBody())), 'chunked');
      expect(okData(res).orderId).toEqual(expect.any(String));
    });
  });

  describe('routing', () => {
    it.each(['/courier/nope', '/courier', '/courier/', '/courier/get_address/extra', '/courier/GET_ADDRESS'])(
      'unknown path %s -> 404',
      async (path) => {
        envelope(await request(app.server).get(path), 404, 1);
        envelope(await request(app.server).post(path).send({}), 404, 1);
      },
    );

    it('wrong method on a known path -> 405 with Allow', async () => {
      const onGet = await request(app.server).post('/courier/get_address').send({});
      envelope(onGet, 405, 1);
      expect(onGet.headers.allow).toBe('GET');
      const onPost = await request(app.server).get('/courier/create_order');
      envelope(onPost, 405, 1);
      expect(onPost.headers.allow).toBe('POST');
      const onDelete = await request(app.server).delete('/courier/cancel_order');
      envelope(onDelete, 405, 1);
      expect(onDelete.headers.allow).toBe('POST');
      const onTrace = await request(app.server).trace('/courier/cancel_order');
      envelope(onTrace, 405, 1);
      expect(onTrace.headers.allow).toBe('POST');
    });

    it('a trailing slash is tolerated', async () => {
      okData(await request(app.server).get('/courier/get_balance/'));
      const res = await request(app.server).post('/courier/query_pre_order_status/').send({ preorderId: 'PO-nope' });
      envelope(res, 200, 1); // reached the upstream, which does not know the pre-order
    });

    it('a host route is still reached with its own answer', async () => {
      const res = await request(app.server).get('/host/hello');
      expect(res.status).toBe(200);
      expect(res.text).toBe(HELLO);
    });

    it("a host POST route gets the host's body intact", async () => {
      const body = { greeting: 'hi', nested: { list: [1, 2, 3] }, api: 'not the proxy' };
      const res = await request(app.server).post('/host/echo').send(body);
      expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 200, body: { echoed: body } });
    });

    it('a path that only starts like the proxy is the host’s', async () => {
      const res = await request(app.server).get('/courierx/get_address');
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('"code"');
    });
  });

  describe('a host that already parsed the body', () => {
    it('create_order uses the parsed body', async () => {
      const data = okData(await request(parsed.server).post('/courier/create_order').send(orderBody()));
      expect(data.orderId).toEqual(expect.any(String));
    });

    it('validation still applies to the parsed body', async () => {
      const res = await request(parsed.server).post('/courier/create_order').send(without(orderBody(), 'goodsWeight'));
      expect((envelope(res, 400, 1).data as { errors: unknown[] }).errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'goodsWeight', rule: 'required' })]),
      );
    });

    it('a parsed JSON array is still refused', async () => {
      const res = await request(parsed.server).post('/courier/cancel_order').send([{ orderId: 'SO1' }]);
      envelope(res, 400, 1);
    });

    it('a text/plain body the host parser left alone -> 415', async () => {
      const res = await request(parsed.server).post('/courier/cancel_order').set('content-type', 'text/plain').send('{"orderId":"SO1"}');
      envelope(res, 415, 1);
    });

    it('a form-encoded body is refused the same way with or without a host parser (415)', async () => {
      // POST operations take a JSON body (docs/courier.md). A host parser that also decodes forms (Koa's
      // bodyParser() does by default) must not turn the same request into an upstream call.
      for (const target of [app, parsed]) {
        const res = await request(target.server).post('/courier/cancel_order').type('form').send('orderId=SO1');
        envelope(res, 415, 1);
      }
    });

    it('GET operations and host routes still work', async () => {
      okData(await request(parsed.server).get('/courier/get_express_type'));
      expect((await request(parsed.server).get('/host/hello')).text).toBe(HELLO);
      const res = await request(parsed.server).post('/host/echo').send({ a: 1 });
      expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 200, body: { echoed: { a: 1 } } });
    });
  });

  describe('options are checked at construction', () => {
    it.each([
      [{ colour: 'red' }, 'colour'],
      [{ courier: { upstreamURL: 'http://127.0.0.1:1' } }, 'upstreamURL'],
      [{ courier: { timeoutMs: -1 } }, 'timeoutMs'],
      [{ courier: { retries: 1.5 } }, 'retries'],
      [{ courier: { signer: 'sha1' } }, 'signer'],
      [{ courier: { transport: 'axios' } }, 'transport'],
      [{ courier: { upstreamUrl: 'ftp://courier.example' } }, 'upstreamUrl'],
      [{ courier: { credentials: { appId: 'a' } } }, 'appSecret'],
      [{ bodyLimit: 0 }, 'bodyLimit'],
    ])('%j throws a TypeError naming %s', (bad, name) => {
      const build = () => adapter.build(bad as CourierPlatformOptions);
      expect(build).toThrow(TypeError);
      expect(build).toThrow(name);
    });

    it('valid options do not throw', () => {
      expect(() => adapter.build({ logger: silentLogger, courier: { upstreamUrl: 'http://127.0.0.1:1', timeoutMs: 300, retries: 0, signer: 'hmac-sha256' } })).not.toThrow();
    });
  });
});
