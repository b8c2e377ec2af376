/**
 * What the sandbox over HTTP remembers between calls: each app's orders and balances apart, balance
 * payment and its refund, the pre-order control endpoints and auto-confirm on an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { APP_ID, call, manualClock, orderParams, post, sandboxPerSuite } from './helpers.js';

describe('sandbox over HTTP: per-app state', () => {
  const apps = { 'app-a': 'secret-a', 'app-b': 'secret-b' };
  const upstream = sandboxPerSuite({ apps });

  const as = (appId: 'app-a' | 'app-b') => ({ appId, secret: apps[appId] });

  it('keeps orders, bills, pre-orders and balances apart', async () => {
    const { data } = await call(upstream.url, 'create_order', orderParams({ paymentId: 12, sellerOrderNo: 'SHARED' }), as('app-a'));
    const orderId = data.orderId as string;

    expect((await call(upstream.url, 'query_order_logs', { orderId }, as('app-b'))).code).toBe(40401);
    expect((await call(upstream.url, 'query_order_logs', { sellerOrderNo: 'SHARED' }, as('app-b'))).code).toBe(40401);
    expect((await call(upstream.url, 'cancel_order', { orderId }, as('app-b'))).code).toBe(40401);
    expect((await call(upstream.url, 'query_account_details', {}, as('app-b'))).data.total).toBe(0);
    expect((await call(upstream.url, 'query_account_details', {}, as('app-a'))).data.total).toBe(1);
    // the same sellerOrderNo is free in the other app
    expect((await call(upstream.url, 'create_order', orderParams({ sellerOrderNo: 'SHARED' }), as('app-b'))).code).toBe(0);

    expect((await call(upstream.url, 'get_balance', {}, as('app-a'))).data.onlineBalance).toBe(986);
    expect((await call(upstream.url, 'get_balance', {}, as('app-b'))).data.onlineBalance).toBe(1000);

    const { data: pre } = await call(upstream.url, 'create_pre_order', {}, as('app-a'));
    expect((await call(upstream.url, 'query_pre_order_status', { preorderId: pre.preorderId }, as('app-b'))).code).toBe(40402);
    const confirm = await post(upstream.url, { appId: 'app-b', preorderId: pre.preorderId }, '/_sandbox/pre_orders/confirm');
    expect(confirm).toMatchObject({ status: 404, body: { code: 40402 } });
  });

  it('an app cannot use another app secret', async () => {
    expect((await call(upstream.url, 'get_balance', {}, { appId: 'app-a', secret: 'secret-b' })).code).toBe(40001);
  });
});

describe('sandbox over HTTP: balance payment', () => {
  it('decreases onlineBalance by payAmount, refuses when short, refunds on cancel', async () => {
    const upstream = await startSandbox({ initialBalance: { onlineBalance: 30 } });
    try {
      const fee = (await call(upstream.url, 'billing_fee', orderParams({ paymentId: 12, goodsWeight: 3 }))).data;
      expect(fee.payAmount).toBe(18);
      const { data } = await call(upstream.url, 'create_order', orderParams({ paymentId: 12, goodsWeight: 3 }));
      expect((await call(upstream.url, 'get_balance')).data.onlineBalance).toBe(12);

      const short = await call(upstream.url, 'create_order', orderParams({ paymentId: 12, goodsWeight: 3 }));
      expect(short.code).toBe(40903);
      expect((await call(upstream.url, 'get_balance')).data.onlineBalance).toBe(12);

      await call(upstream.url, 'cancel_order', { orderId: data.orderId });
      expect((await call(upstream.url, 'get_balance')).data.onlineBalance).toBe(30);
    } finally {
      await upstream.close();
    }
  });
});

describe('sandbox over HTTP: pre-order control endpoints', () => {
  const upstream = sandboxPerSuite();

  it('confirm moves 1 -> 2 with an orderId usable in query_order_logs', async () => {
    const { data } = await call(upstream.url, 'create_pre_order', { customerAddress: 'Dock 4' });
    const preorderId = data.preorderId as string;
    const confirmed = await post(upstream.url, { appId: APP_ID, preorderId }, '/_sandbox/pre_orders/confirm');
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({
      code: 0,
      message: 'ok',
      data: { preorderId, statusId: 2, orderId: expect.stringMatching(/^SO/) },
    });
    const orderId = confirmed.body.data.orderId as string;

    const status = await call(upstream.url, 'query_pre_order_status', { preorderId });
    expect(status.data).toEqual({ preorderId, statusId: 2, statusName: 'ordered', orderId });
    const logs = await call(upstream.url, 'query_order_logs', { orderId });
    expect(logs.code).toBe(0);
    expect(logs.data[0]).toMatchObject({ opTypeName: 'created' });

    const twice = await post(upstream.url, { appId: APP_ID, preorderId }, '/_sandbox/pre_orders/confirm');
    expect(twice).toMatchObject({ status: 409, body: { code: 40905, data: null } });
  });

  it('confirm through the Sandbox object works the same way', async () => {
    const { data } = await call(upstream.url, 'create_pre_order', {});
    const orderId = upstream.sandbox.confirmPreOrder(APP_ID, data.preorderId);
    expect((await call(upstream.url, 'query_pre_order_status', { preorderId: data.preorderId })).data.orderId).toBe(orderId);
    expect((await call(upstream.url, 'query_order_logs', { orderId })).code).toBe(0);
  });

  it('cancel moves 1 -> 0 and the status has no orderId', async () => {
    const { data } = await call(upstream.url, 'create_pre_order', {});
    const cancelled = await post(upstream.url, { appId: APP_ID, preorderId: data.preorderId }, '/_sandbox/pre_orders/cancel');
    expect(cancelled).toMatchObject({ status: 200, body: { code: 0, data: { preorderId: data.preorderId, statusId: 0 } } });
    expect('orderId' in cancelled.body.data).toBe(false);
    const status = await call(upstream.url, 'query_pre_order_status', { preorderId: data.preorderId });
    expect(status.data).toEqual({ preorderId: data.preorderId, statusId: 0, statusName: 'cancelled' });
  });

  it('answers errors with matching HTTP statuses', async () => {
    expect(await post(upstream.url, { appId: APP_ID, preorderId: 'PO-missing' }, '/_sandbox/pre_orders/confirm')).toMatchObject({
      status: 404,
      body: { code: 40402 },
    });
    expect(await post(upstream.url, { appId: 'stranger', preorderId: 'PO1' }, '/_sandbox/pre_orders/cancel')).toMatchObject({
      status: 400,
      body: { code: 40002 },
    });
    expect(await post(upstream.url, { preorderId: 'PO1' }, '/_sandbox/pre_orders/confirm')).toMatchObject({
      status: 400,
      body: { code: 40004 },
    });
    expect(await post(upstream.url, {}, '/_sandbox/nothing')).toMatchObject({ status: 404, body: { code: 40400 } });
  });
});

describe('sandbox over HTTP: auto-confirm with an injected clock', () => {
  it('confirms on the first status query after the delay', async () => {
    const clock = manualClock('2026-09-01T12:00:00.000Z');
    const upstream = await startSandbox({ now: clock.now, autoConfirmPreOrdersAfterMs: 60_000 });
    try {
      const { data } = await call(upstream.url, 'create_pre_order', {});
      expect((await call(upstream.url, 'query_pre_order_status', { preorderId: data.preorderId })).data.statusId).toBe(1);
      clock.advance(60_000);
      const status = (await call(upstream.url, 'query_pre_order_status', { preorderId: data.preorderId })).data;
      expect(status).toMatchObject({ statusId: 2, orderId: expect.stringMatching(/^SO20260901/) });
      expect((await call(upstream.url, 'query_order_logs', { orderId: status.orderId })).code).toBe(0);
    } finally {
      await upstream.close();
    }
  });
});
