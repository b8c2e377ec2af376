/**
 * The sandbox over HTTP: each of the 13 operations answered as the real upstream answers it, and
 * the server's lifecycle (close with connections open, ports, two servers of one sandbox).
 * Refused calls and per-app state have files of their own (server.rejections, server.state).
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { call, orderParams, post, signed, sandboxPerSuite } from './helpers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('sandbox over HTTP: the 13 operations', () => {
  const upstream = sandboxPerSuite();

  it('get_address: buildings with floors, floor ids unique across buildings', async () => {
    const envelope = await call(upstream.url, 'get_address');
    expect(envelope).toMatchObject({ code: 0, message: 'ok' });
    const mansions = envelope.data as { mansionId: number; mansionName: string; floors: { floorId: number; floorName: string }[] }[];
    expect(mansions).toHaveLength(4);
    const floorIds = mansions.flatMap((mansion) => mansion.floors.map((floor) => floor.floorId));
    expect(new Set(floorIds).size).toBe(floorIds.length);
    for (const mansion of mansions) {
      expect(mansion).toEqual({ mansionId: expect.any(Number), mansionName: expect.any(String), floors: expect.any(Array) });
      expect(mansion.floors.length).toBeGreaterThanOrEqual(3);
      expect(mansion.floors.length).toBeLessThanOrEqual(6);
      for (const floor of mansion.floors) expect(floor).toEqual({ floorId: expect.any(Number), floorName: expect.any(String) });
    }
  });

  it('get_express_type: ids 1..3 with names', async () => {
    const { data } = await call(upstream.url, 'get_express_type');
    expect(data.map((t: any) => t.expressTypeId)).toEqual([1, 2, 3]);
    for (const type of data) expect(type).toEqual({ expressTypeId: expect.any(Number), expressTypeName: expect.any(String) });
  });

  it('get_express_tags: bit-flag ids 1, 2, 4, 8 with names', async () => {
    const { data } = await call(upstream.url, 'get_express_tags');
    expect(data.map((t: any) => t.expressTagId)).toEqual([1, 2, 4, 8]);
    for (const tag of data) expect(tag).toEqual({ expressTagId: expect.any(Number), expressTagName: expect.any(String) });
  });

  it('get_balance: the six numeric fields', async () => {
    const { data } = await call(upstream.url, 'get_balance');
    expect(Object.keys(data).sort()).toEqual(
      ['creditAmount', 'creditBalance', 'creditDays', 'isCredit', 'onlineBalance', 'proxyBalance'],
    );
    for (const value of Object.values(data)) expect(typeof value).toBe('number');
    expect(data.isCredit).toBe(1);
  });

  it('get_coupon: ids, ISO validity window and amounts', async () => {
    const { data } = await call(upstream.url, 'get_coupon');
    expect(data.length).toBeGreaterThan(0);
    for (const coupon of data) {
      expect(coupon).toEqual({
        couponId: expect.any(Number),
        validityBtime: expect.stringMatching(ISO),
        validityEtime: expect.stringMatching(ISO),
        couponAmount: expect.any(Number),
      });
    }
  });

  it('billing_fee: the seven fee fields, amounts in cents precision', async () => {
    const { code, data } = await call(upstream.url, 'billing_fee', orderParams({ expressTagIds: 2, goodsWeight: 1.2 }));
    expect(code).toBe(0);
    expect(data).toEqual({
      serviceCharge: 21, // 8 + 2 (second kg) + 3 + 3 + 5 urgent
      payAmount: 21,
      fetchServiceCharge: 3,
      sendServiceCharge: 3,
      overweightServiceCharge: 0,
      surcharge: [{ expressTagId: 2, name: 'Urgent', amount: 5 }],
      couponAmount: 0,
    });
  });

  it('create_order: orderId, companyId and a label only when returnPrintImg is 1', async () => {
    const plain = await call(upstream.url, 'create_order', orderParams());
    expect(plain.data).toEqual({ orderId: expect.stringMatching(/^SO\d{8}\d{6,}$/), companyId: expect.any(Number), printImgUrl: '' });
    const labelled = await call(upstream.url, 'create_order', orderParams({ returnPrintImg: 1 }));
    expect(labelled.data.printImgUrl).toBe(`http://sandbox.invalid/labels/${labelled.data.orderId}.png`);
    expect(labelled.data.orderId).not.toBe(plain.data.orderId);
  });

  it('create_agent_order: also payInfo, the payment QR-code address of the wallet', async () => {
    const { data } = await call(upstream.url, 'create_agent_order', orderParams({ paymentId: 2 }));
    expect(data).toEqual({
      orderId: expect.stringMatching(/^SO/),
      companyId: expect.any(Number),
      printImgUrl: '',
      payInfo: `http://sandbox.invalid/pay/${data.orderId}?wallet=2`,
    });
  });

  it('cancel_order, query_order_logs, query_account_details: the trail of an order', async () => {
    const { data: created } = await call(upstream.url, 'create_order', orderParams({ sellerOrderNo: 'TRAIL-1' }));
    const orderId = created.orderId as string;

    const before = await call(upstream.url, 'query_order_logs', { orderId });
    expect(before.data).toEqual([
      {
        opId: expect.any(Number),
        opTypeName: 'created',
        opTime: expect.stringMatching(ISO),
        opText: expect.stringContaining('Order created'),
        opImg: '',
        opName: expect.any(String),
        opMobilePhone: expect.any(String),
      },
    ]);

    const cancelled = await call(upstream.url, 'cancel_order', { orderId, cancelMemo: 'wrong address' });
    expect(cancelled).toEqual({ code: 0, message: 'ok', data: { orderId, cancelled: true } });

    const after = await call(upstream.url, 'query_order_logs', { sellerOrderNo: 'TRAIL-1' });
    expect(after.data.map((log: any) => log.opTypeName)).toEqual(['created', 'cancelled']);
    expect(after.data[1].opText).toContain('wrong address');
    expect(after.data[1].opId).toBeGreaterThan(after.data[0].opId);

    const today = new Date().toISOString().slice(0, 10);
    const bills = await call(upstream.url, 'query_account_details', { startDate: today, endDate: today, orderId });
    expect(bills.data.total).toBe(2);
    expect(bills.data.records).toBe(bills.data.rows.length);
    expect(bills.data.rows).toEqual([
      { orderId, feeTypeName: 'freight', titleTypeName: 'card payment', costAmount: 14, incomeAmount: 0, opTime: expect.stringMatching(ISO) },
      { orderId, feeTypeName: 'freight refund', titleTypeName: 'card payment', costAmount: 0, incomeAmount: 14, opTime: expect.stringMatching(ISO) },
    ]);

    const again = await call(upstream.url, 'cancel_order', { orderId });
    expect(again).toMatchObject({ code: 40902, data: null });
    expect(again.message).toContain('already cancelled');
    expect((await call(upstream.url, 'query_order_logs', { orderId })).data).toHaveLength(2);

    expect((await call(upstream.url, 'cancel_order', { orderId: 'SO-nope' })).code).toBe(40401);
    expect((await call(upstream.url, 'cancel_order', {})).code).toBe(40004);
  });

  it('create_pre_order and query_pre_order_status: pending until confirmed', async () => {
    const created = await call(upstream.url, 'create_pre_order', {
      orderTypeId: 1,
      customerAddress: 'Somewhere 5',
      myAddress: 'Elsewhere 9',
      goodsWeight: 2,
    });
    expect(created).toEqual({ code: 0, message: 'ok', data: { preorderId: expect.stringMatching(/^PO/) } });
    const status = await call(upstream.url, 'query_pre_order_status', { preorderId: created.data.preorderId });
    expect(status.data).toEqual({ preorderId: created.data.preorderId, statusId: 1, statusName: 'pending confirmation' });
    expect('orderId' in status.data).toBe(false);
  });

  it('rejects a duplicate sellerOrderNo across orders and pre-orders with 40901', async () => {
    expect((await call(upstream.url, 'create_order', orderParams({ sellerOrderNo: 'DUP-1' }))).code).toBe(0);
    const second = await call(upstream.url, 'create_order', orderParams({ sellerOrderNo: 'DUP-1' }));
    expect(second).toMatchObject({ code: 40901, data: null });
    expect(second.message).toContain('DUP-1');
    expect((await call(upstream.url, 'create_agent_order', orderParams({ sellerOrderNo: 'DUP-1' }))).code).toBe(40901);
    expect((await call(upstream.url, 'create_pre_order', { sellerOrderNo: 'DUP-1' })).code).toBe(40901);
  });

  it('answers any path with POST as an upstream call', async () => {
    const answer = await post(upstream.url, signed('get_express_type'), '/open/api/gateway?x=1');
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe(0);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});

describe('sandbox server lifecycle', () => {
  it('close() resolves quickly with keep-alive and half-sent requests open', async () => {
    const running: RunningSandbox = await createSandbox().listen({ port: 0 });
    expect(running.url).toBe(`http://127.0.0.1:${running.port}`);
    // keep-alive connections left idle by fetch
    await Promise.all([1, 2, 3].map(() => call(running.url, 'get_address')));
    // a connection in the middle of a request: server.close() alone would wait for it
    const socket = connect(running.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"api":');
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));

    const started = performance.now();
    await running.close();
    await socketClosed;
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(fetch(running.url, { method: 'POST', body: '{}' })).rejects.toThrow();
    await expect(running.close()).resolves.toBeUndefined();
  });

  it('listens on a given port and rejects a bad one', async () => {
    const sandbox = createSandbox();
    const first = await sandbox.listen();
    try {
      await expect(sandbox.listen({ port: first.port })).rejects.toThrow(/EADDRINUSE/);
      await expect(sandbox.listen({ port: 70_000 })).rejects.toMatchObject({ code: 'invalid_option', issues: [{ field: 'port' }] });
      await expect(sandbox.listen({ host: '' })).rejects.toMatchObject({ code: 'invalid_option', issues: [{ field: 'host' }] });
    } finally {
      await first.close();
    }
  });

  it('two servers of one sandbox share its state', async () => {
    const sandbox = createSandbox();
    const [one, two] = await Promise.all([sandbox.listen(), sandbox.listen()]);
    try {
      const { data } = await call(one.url, 'create_order', orderParams());
      expect((await call(two.url, 'query_order_logs', { orderId: data.orderId })).code).toBe(0);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
