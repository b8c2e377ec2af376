/**
 * The courier proxy over HTTP, on every adapter: the 13 operations against the sandbox upstream,
 * and where the upstream credentials come from (docs/courier.md).
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { SandboxCode } from '../../src/sandbox/index.js';
import { ADAPTERS } from '../support/apps.js';
import {
  OTHER_APP,
  SANDBOX_APP,
  basic,
  envelope,
  okData,
  orderBody,
  preOrderBody,
  sandboxUpstream,
  todayUtc,
  type Addresses,
} from '../support/courier.js';
import { serve, type Served } from '../support/net.js';

const upstream = sandboxUpstream();

type Row = Record<string, unknown>;

describe.each(ADAPTERS)('courier proxy on $name', (adapter) => {
  /** Configured credentials: sandbox-app. */
  let app: Served;
  /** No configured credentials: every call needs Basic Auth. */
  let bare: Served;

  beforeAll(async () => {
    app = await serve(
      adapter.build({ logger: silentLogger, courier: { upstreamUrl: upstream().url, credentials: { ...SANDBOX_APP } } }),
    );
    bare = await serve(adapter.build({ logger: silentLogger, courier: { upstreamUrl: upstream().url } }));
  });

  afterAll(async () => {
    await Promise.all([app?.close(), bare?.close()]);
  });

  const get = (op: string) => request(app.server).get(`/courier/${op}`);
  const post = (op: string, body: object) => request(app.server).post(`/courier/${op}`).send(body);

  /** Building and floor ids taken from get_address, as a caller would. */
  async function addresses(): Promise<Addresses> {
    const mansions = okData<{ mansionId: number; floors: { floorId: number }[] }[]>(await get('get_address'));
    const [customer, my] = [mansions[0]!, mansions[mansions.length - 1]!];
    return {
      customerMansionId: customer.mansionId,
      customerFloorId: customer.floors[0]!.floorId,
      myMansionId: my.mansionId,
      myFloorId: my.floors[my.floors.length - 1]!.floorId,
    };
  }

  async function createOrder(auth?: string): Promise<string> {
    const call = request(app.server).post('/courier/create_order');
    if (auth) call.set('authorization', auth);
    const data = okData(await call.send(orderBody(await addresses())));
    expect(data.orderId).toEqual(expect.any(String));
    return data.orderId as string;
  }

  describe('the 13 operations', () => {
    it('get_address answers buildings with their floors', async () => {
      const data = okData<Row[]>(await get('get_address'));
      expect(data.length).toBeGreaterThan(0);
      for (const mansion of data) {
        expect(mansion).toMatchObject({ mansionId: expect.any(Number), mansionName: expect.any(String), floors: expect.any(Array) });
        for (const floor of mansion.floors as Row[]) {
          expect(floor).toMatchObject({ floorId: expect.any(Number), floorName: expect.any(String) });
        }
      }
    });

    it('get_express_type answers express types', async () => {
      const data = okData<Row[]>(await get('get_express_type'));
      expect(data.length).toBeGreaterThan(0);
      for (const type of data) expect(type).toMatchObject({ expressTypeId: expect.any(Number), expressTypeName: expect.any(String) });
    });

    it('get_express_tags answers express tags', async () => {
      const data = okData<Row[]>(await get('get_express_tags'));
      expect(data.length).toBeGreaterThan(0);
      for (const tag of data) expect(tag).toMatchObject({ expressTagId: expect.any(Number), expressTagName: expect.any(String) });
    });

    it('get_balance answers the balance', async () => {
      const data = okData(await get('get_balance'));
      expect(data).toMatchObject({
        isCredit: expect.any(Number),
        creditDays: expect.any(Number),
        creditAmount: expect.any(Number),
        creditBalance: expect.any(Number),
        onlineBalance: expect.any(Number),
        proxyBalance: expect.any(Number),
      });
      expect([0, 1]).toContain(data.isCredit);
    });

    it('get_coupon answers coupons', async () => {
      const data = okData<Row[]>(await get('get_coupon'));
      expect(data.length).toBeGreaterThan(0);
      for (const coupon of data) {
        expect(Object.keys(coupon)).toEqual(expect.arrayContaining(['couponId', 'validityBtime', 'validityEtime', 'couponAmount']));
      }
    });

    it('billing_fee estimates with ids taken from get_address and get_express_type', async () => {
      const types = okData<{ expressTypeId: number }[]>(await get('get_express_type'));
      const { customerMansionId, customerFloorId, myMansionId, myFloorId } = await addresses();
      const data = okData(
        await post('billing_fee', {
          orderTypeId: 2,
          sendTypeId: 21,
          fetchTypeId: 11,
          paymentId: 12,
          expressTypeId: types[0]!.expressTypeId,
          expressTagIds: 0,
          customerMansionId,
          customerFloorId,
          customerHouseNumber: 'A3',
          myMansionId,
          myFloorId,
          myHouseNumber: '12B',
          goodsWeight: 3,
          goodsCollection: 0,
          goodsPayment: 0,
        }),
      );
      expect(data).toMatchObject({
        serviceCharge: expect.any(Number),
        payAmount: expect.any(Number),
        fetchServiceCharge: expect.any(Number),
        sendServiceCharge: expect.any(Number),
        overweightServiceCharge: expect.any(Number),
        couponAmount: expect.any(Number),
      });
      expect(data).toHaveProperty('surcharge');
      expect(data.serviceCharge as number).toBeGreaterThan(0);
    });

    it('billing_fee and create_order take a couponId from get_coupon, whose amount comes off payAmount', async () => {
      const [coupon] = okData<{ couponId: number; couponAmount: number }[]>(await get('get_coupon'));
      const body = orderBody(await addresses());
      const full = okData<{ payAmount: number; couponAmount: number }>(await post('billing_fee', body));
      const discounted = okData<{ payAmount: number; couponAmount: number }>(await post('billing_fee', { ...body, couponId: coupon!.couponId }));
      expect(full.couponAmount).toBe(0);
      expect(discounted.couponAmount).toBe(Math.min(coupon!.couponAmount, full.payAmount));
      expect(discounted.payAmount).toBeCloseTo(full.payAmount - discounted.couponAmount, 2);
      okData(await post('create_order', { ...body, sellerOrderNo: `${body.sellerOrderNo}-c`, couponId: coupon!.couponId }));
      envelope(await post('billing_fee', { ...body, couponId: 0 }), 400, 1);
    });

    it('create_order -> query_order_logs -> cancel_order -> query_account_details of today', async () => {
      const body = orderBody(await addresses());
      const created = okData(await post('create_order', body));
      expect(created).toMatchObject({ orderId: expect.any(String), companyId: expect.anything(), printImgUrl: expect.any(String) });
      const orderId = created.orderId as string;

      const logs = okData<Row[]>(await post('query_order_logs', { orderId }));
      expect(logs.length).toBeGreaterThan(0);
      for (const log of logs) {
        expect(Object.keys(log)).toEqual(
          expect.arrayContaining(['opId', 'opTypeName', 'opTime', 'opText', 'opImg', 'opName', 'opMobilePhone']),
        );
      }
      const bySeller = okData<Row[]>(await post('query_order_logs', { sellerOrderNo: body.sellerOrderNo }));
      expect(bySeller).toEqual(logs);

      okData(await post('cancel_order', { orderId, cancelMemo: 'changed my mind' }));
      const afterCancel = okData<Row[]>(await post('query_order_logs', { orderId }));
      expect(afterCancel.length).toBeGreaterThan(logs.length);

      const today = todayUtc();
      const bill = okData<{ total: number; records: unknown; rows: Row[] }>(
        await post('query_account_details', { startDate: today, endDate: today }),
      );
      expect(bill).toMatchObject({ total: expect.any(Number), records: expect.anything(), rows: expect.any(Array) });
      const rows = bill.rows.filter((row) => row.orderId === orderId);
      expect(rows.length).toBeGreaterThanOrEqual(2); // the charge and the refund
      for (const row of rows) {
        expect(row).toMatchObject({
          orderId,
          feeTypeName: expect.any(String),
          titleTypeName: expect.any(String),
          costAmount: expect.any(Number),
          incomeAmount: expect.any(Number),
        });
      }
      const filtered = okData<{ rows: Row[] }>(await post('query_account_details', { startDate: today, endDate: today, orderId }));
      expect(filtered.rows).toEqual(rows);
    });

    it('create_agent_order answers payInfo', async () => {
      const data = okData(await post('create_agent_order', orderBody(await addresses(), { paymentId: 2 })));
      expect(data).toMatchObject({ orderId: expect.any(String), payInfo: expect.any(String) });
      expect(data.payInfo).not.toBe('');
    });

    it('create_pre_order -> status 1 -> confirmed upstream -> status 2 with orderId -> query_order_logs', async () => {
      const created = okData(await post('create_pre_order', preOrderBody()));
      expect(created.preorderId).toEqual(expect.any(String));
      const preorderId = created.preorderId as string;

      const pending = okData(await post('query_pre_order_status', { preorderId }));
      expect(pending).toMatchObject({ statusId: 1 });
      expect(pending.orderId).toBeUndefined();

      const confirmedId = upstream().sandbox.confirmPreOrder(SANDBOX_APP.appId, preorderId);

      const ordered = okData(await post('query_pre_order_status', { preorderId }));
      expect(ordered).toMatchObject({ statusId: 2, orderId: confirmedId });

      const logs = okData<Row[]>(await post('query_order_logs', { orderId: ordered.orderId }));
      expect(logs.length).toBeGreaterThan(0);
    });
  });

  describe('credentials (docs/courier.md)', () => {
    it('uses the configured credentials when no Basic Auth is sent', async () => {
      const orderId = await createOrder();
      // The order belongs to sandbox-app: visible with its credentials, not with other-app's.
      const mine = request(bare.server).post('/courier/query_order_logs').set('authorization', basic(SANDBOX_APP.appId, SANDBOX_APP.appSecret));
      expect(okData<Row[]>(await mine.send({ orderId })).length).toBeGreaterThan(0);
      const theirs = request(bare.server).post('/courier/query_order_logs').set('authorization', basic(OTHER_APP.appId, OTHER_APP.appSecret));
      const refused = envelope(await theirs.send({ orderId }), 200, 1);
      expect(refused.data).toEqual({ upstreamCode: SandboxCode.ORDER_NOT_FOUND });
    });

    it('Basic Auth overrides the configured credentials, for that request only', async () => {
      const otherAuth = basic(OTHER_APP.appId, OTHER_APP.appSecret);
      const orderId = await createOrder(otherAuth);

      // Without Basic Auth the configured sandbox-app is used again, and cannot see other-app's order.
      const hidden = envelope(await post('query_order_logs', { orderId }), 200, 1);
      expect(hidden.data).toEqual({ upstreamCode: SandboxCode.ORDER_NOT_FOUND });
      expect(hidden.message).toMatch(/not found/i);

      const visible = await request(app.server).post('/courier/query_order_logs').set('authorization', otherAuth).send({ orderId });
      expect(okData<Row[]>(visible).length).toBeGreaterThan(0);
    });

    it("a wrong secret surfaces the upstream's 'invalid signature' as HTTP 200, code 1", async () => {
      const res = await request(app.server).get('/courier/get_balance').set('authorization', basic(SANDBOX_APP.appId, 'not-the-secret'));
      const body = envelope(res, 200, 1);
      expect(body.message).toMatch(/invalid signature/i);
      expect(body.data).toEqual({ upstreamCode: SandboxCode.INVALID_SIGNATURE });
    });

    it('without configured credentials and without Basic Auth: 401 with a Basic challenge', async () => {
      for (const call of [
        request(bare.server).get('/courier/get_balance'),
        request(bare.server).post('/courier/create_order').send(orderBody()),
      ]) {
        const res = await call;
        const body = envelope(res, 401, 1);
        expect(body.message).toMatch(/basic/i);
        expect(res.headers['www-authenticate']).toMatch(/^Basic\b/i);
      }
    });

    it('without configured credentials, Basic Auth alone works', async () => {
      const res = await request(bare.server).get('/courier/get_balance').set('authorization', basic(OTHER_APP.appId, OTHER_APP.appSecret));
      okData(res);
    });

    const halfFilled: [string, string][] = [
      ['user only', basic(SANDBOX_APP.appId, '')],
      ['password only', basic('', SANDBOX_APP.appSecret)],
      ['no colon', `Basic ${Buffer.from('nocolon').toString('base64')}`],
      ['bytes that are not UTF-8', `Basic ${Buffer.concat([Buffer.from('app:'), Buffer.from([0xff, 0xfe])]).toString('base64')}`],
      ['not base64', 'Basic %%%not*base64%%%'],
      ['no token', 'Basic'],
    ];

    it.each(halfFilled)('Basic Auth with %s: 401, configured credentials are not used instead', async (_what, header) => {
      for (const target of [app, bare]) {
        const res = await request(target.server).get('/courier/get_balance').set('authorization', header);
        envelope(res, 401, 1);
      }
    });

    it('a Bearer Authorization header counts as no Basic Auth', async () => {
      const bearer = 'Bearer eyJhbGciOiJub25lIn0.e30.';
      okData(await request(app.server).get('/courier/get_balance').set('authorization', bearer));
      const res = await request(bare.server).get('/courier/get_balance').set('authorization', bearer);
      envelope(res, 401, 1);
      expect(res.headers['www-authenticate']).toMatch(/^Basic\b/i);
    });
  });
});
