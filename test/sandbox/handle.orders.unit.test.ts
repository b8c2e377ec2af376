/**
 * sandbox.handle() in process, what it keeps per app: orders and their ids, balance and credit
 * payment, bills, the order limit, and pre-orders confirmed, cancelled or auto-confirmed.
 */
import { describe, expect, it } from 'vitest';
import { createSandbox, SandboxCode, SandboxError } from '../../src/sandbox/index.js';
import { APP_ID, manualClock, ok, orderParams, run } from './helpers.js';

describe('sandbox handle(): orders, balance and bills', () => {
  it('builds deterministic order ids from the clock: SO + yyyymmdd + sequence', () => {
    const make = () => createSandbox({ now: manualClock('2026-03-15T23:59:00.000Z').now });
    const [a, b] = [make(), make()];
    const first = ok(a, 'create_order', orderParams());
    expect(first.orderId).toBe('SO20260315000001');
    expect(ok(a, 'create_order', orderParams()).orderId).toBe('SO20260315000002');
    expect(ok(b, 'create_order', orderParams())).toEqual(first);
  });

  it('charges balance payment (12) to onlineBalance and refunds it on cancel', () => {
    const sandbox = createSandbox();
    expect(ok(sandbox, 'get_balance')).toEqual({
      isCredit: 1,
      creditDays: 30,
      creditAmount: 5000,
      creditBalance: 5000,
      onlineBalance: 1000,
      proxyBalance: 0,
    });
    const { orderId } = ok(sandbox, 'create_order', orderParams({ paymentId: 12, goodsWeight: 2.5 })); // 18.00
    expect(ok(sandbox, 'get_balance')).toMatchObject({ onlineBalance: 982, creditBalance: 5000 });
    ok(sandbox, 'cancel_order', { orderId });
    expect(ok(sandbox, 'get_balance')).toMatchObject({ onlineBalance: 1000 });
  });

  it('charges credit payment (11) to creditBalance; card payment (1) touches neither', () => {
    const sandbox = createSandbox();
    ok(sandbox, 'create_order', orderParams({ paymentId: 11 }));
    ok(sandbox, 'create_order', orderParams({ paymentId: 1 }));
    expect(ok(sandbox, 'get_balance')).toMatchObject({ creditBalance: 4986, onlineBalance: 1000 });
  });

  it('refuses an order it cannot pay with 40903 and stores nothing', () => {
    const sandbox = createSandbox({ initialBalance: { onlineBalance: 10, creditBalance: 13.99 } });
    const poor = run(sandbox, 'create_order', orderParams({ paymentId: 12, sellerOrderNo: 'ERP-1' }));
    expect(poor).toMatchObject({ code: SandboxCode.INSUFFICIENT_BALANCE, data: null });
    expect(poor.message).toMatch(/payAmount 14 exceeds onlineBalance 10/);
    expect(run(sandbox, 'create_order', orderParams({ paymentId: 11 })).code).toBe(40903);
    expect(ok(sandbox, 'get_balance')).toMatchObject({ onlineBalance: 10, creditBalance: 13.99 });
    // the sellerOrderNo was not taken and no bill was written
    expect(ok(sandbox, 'create_order', orderParams({ paymentId: 1, sellerOrderNo: 'ERP-1' })).orderId).toMatch(/^SO/);
    expect(ok(sandbox, 'query_account_details', {}).total).toBe(1);
  });

  it('answers 40904 for credit payment when credit is not enabled', () => {
    const sandbox = createSandbox({ initialBalance: { isCredit: 0 } });
    expect(run(sandbox, 'create_order', orderParams({ paymentId: 11 })).code).toBe(SandboxCode.CREDIT_NOT_ENABLED);
  });

  it('requires the create_order enumerations and addresses, and checks paymentId per order kind', () => {
    const sandbox = createSandbox();
    expect(run(sandbox, 'create_order', orderParams({ myMansionId: undefined })).message).toMatch(/myMansionId: is required/);
    expect(run(sandbox, 'create_order', orderParams({ paymentId: 2 })).message).toMatch(/paymentId: must be one of 1, 11, 12/);
    expect(run(sandbox, 'create_agent_order', orderParams({ paymentId: 12 })).message).toMatch(/paymentId: must be one of 1, 2/);
    expect(run(sandbox, 'create_order', orderParams({ orderTypeId: undefined })).message).toMatch(/orderTypeId: is required/);
  });

  it('finds logs by sellerOrderNo and rejects a mismatching pair or no key', () => {
    const sandbox = createSandbox();
    const { orderId } = ok(sandbox, 'create_order', orderParams({ sellerOrderNo: 'ERP-7' }));
    const logs = ok(sandbox, 'query_order_logs', { sellerOrderNo: 'ERP-7' });
    expect(logs).toHaveLength(1);
    expect(ok(sandbox, 'query_order_logs', { orderId, sellerOrderNo: 'ERP-7' })).toEqual(logs);
    expect(run(sandbox, 'query_order_logs', { orderId, sellerOrderNo: 'ERP-8' }).code).toBe(SandboxCode.ORDER_NOT_FOUND);
    expect(run(sandbox, 'query_order_logs', { sellerOrderNo: 'ERP-8' }).code).toBe(SandboxCode.ORDER_NOT_FOUND);
    expect(run(sandbox, 'query_order_logs', {}).code).toBe(SandboxCode.INVALID_PARAMETER);
  });

  it('filters bill rows by inclusive UTC days and by order', () => {
    const clock = manualClock('2026-05-01T10:00:00.000Z');
    const sandbox = createSandbox({ now: clock.now });
    const a = ok(sandbox, 'create_order', orderParams({ sellerOrderNo: 'A' })).orderId;
    clock.set('2026-05-02T23:59:59.999Z');
    const b = ok(sandbox, 'create_order', orderParams()).orderId;
    clock.set('2026-05-03T00:00:00.000Z');
    ok(sandbox, 'cancel_order', { orderId: a, cancelMemo: 'customer changed mind' });

    const all = ok(sandbox, 'query_account_details', { startDate: '2026-05-01', endDate: '2026-05-03' });
    expect(all).toMatchObject({ total: 3, records: 3 });
    expect(all.rows.map((row: any) => [row.orderId, row.feeTypeName, row.costAmount, row.incomeAmount])).toEqual([
      [a, 'freight', 14, 0],
      [b, 'freight', 14, 0],
      [a, 'freight refund', 0, 14],
    ]);
    expect(all.rows[0]).toEqual({
      orderId: a,
      feeTypeName: 'freight',
      titleTypeName: 'card payment',
      costAmount: 14,
      incomeAmount: 0,
      opTime: '2026-05-01T10:00:00.000Z',
    });
    const day2 = ok(sandbox, 'query_account_details', { startDate: '2026-05-02', endDate: '2026-05-02' });
    expect(day2.rows.map((row: any) => row.orderId)).toEqual([b]);
    expect(ok(sandbox, 'query_account_details', { startDate: '2026-05-01', endDate: '2026-05-03', orderId: a }).total).toBe(2);
    expect(ok(sandbox, 'query_account_details', { sellerOrderNo: 'A' }).total).toBe(2);
    expect(ok(sandbox, 'query_account_details', { orderId: 'SO-unknown' })).toEqual({ total: 0, records: 0, rows: [] });
    expect(ok(sandbox, 'query_account_details', { startDate: '2026-05-04', endDate: '2026-06-01' }).total).toBe(0);
  });

  it.each<[string, Record<string, unknown>]>([
    ['startDate after endDate', { startDate: '2026-05-03', endDate: '2026-05-01' }],
    ['an impossible date', { startDate: '2026-02-30', endDate: '2026-03-01' }],
    ['another format', { startDate: '2026/05/01', endDate: '2026-05-03' }],
  ])('answers 40004 for query_account_details with %s', (_name, params) => {
    expect(run(createSandbox(), 'query_account_details', params).code).toBe(SandboxCode.INVALID_PARAMETER);
  });

  it('forgets the oldest orders beyond maxOrdersPerApp, bills included', () => {
    const sandbox = createSandbox({ maxOrdersPerApp: 10 });
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) ids.push(ok(sandbox, 'create_order', orderParams({ sellerOrderNo: `N${i}` })).orderId);
    expect(run(sandbox, 'query_order_logs', { orderId: ids[0] }).code).toBe(SandboxCode.ORDER_NOT_FOUND);
    expect(ok(sandbox, 'query_order_logs', { orderId: ids[1] })).toHaveLength(1);
    expect(ok(sandbox, 'query_account_details', {}).total).toBe(10);
  });
});

describe('sandbox pre-orders', () => {
  it('confirms, cancels and reports errors as SandboxError with codes', () => {
    const sandbox = createSandbox();
    const first = ok(sandbox, 'create_pre_order', { sellerOrderNo: 'P-1', customerAddress: '12 Long Rd', goodsWeight: 3 }).preorderId;
    const second = ok(sandbox, 'create_pre_order', {}).preorderId;
    expect(first).toMatch(/^PO\d{8}\d{6}$/);
    expect(ok(sandbox, 'query_pre_order_status', { preorderId: first })).toEqual({
      preorderId: first,
      statusId: 1,
      statusName: 'pending confirmation',
    });

    const orderId = sandbox.confirmPreOrder(APP_ID, first);
    expect(orderId).toMatch(/^SO\d{14}$/);
    expect(ok(sandbox, 'query_pre_order_status', { preorderId: first })).toEqual({
      preorderId: first,
      statusId: 2,
      statusName: 'ordered',
      orderId,
    });
    // the order inherited the pre-order's sellerOrderNo
    expect(ok(sandbox, 'query_order_logs', { sellerOrderNo: 'P-1' })[0]).toMatchObject({ opTypeName: 'created' });
    expect(run(sandbox, 'create_order', orderParams({ sellerOrderNo: 'P-1' })).code).toBe(SandboxCode.DUPLICATE_SELLER_ORDER_NO);

    sandbox.cancelPreOrder(APP_ID, second);
    expect(ok(sandbox, 'query_pre_order_status', { preorderId: second })).toEqual({
      preorderId: second,
      statusId: 0,
      statusName: 'cancelled',
    });

    const codeOf = (fn: () => unknown): number | undefined => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(SandboxError);
        return (error as SandboxError).code;
      }
      return undefined;
    };
    expect(codeOf(() => sandbox.confirmPreOrder(APP_ID, first))).toBe(SandboxCode.PRE_ORDER_NOT_PENDING);
    expect(codeOf(() => sandbox.cancelPreOrder(APP_ID, second))).toBe(SandboxCode.PRE_ORDER_NOT_PENDING);
    expect(codeOf(() => sandbox.confirmPreOrder(APP_ID, 'PO-missing'))).toBe(SandboxCode.PRE_ORDER_NOT_FOUND);
    expect(codeOf(() => sandbox.confirmPreOrder('nobody', first))).toBe(SandboxCode.UNKNOWN_APP);
    expect(run(sandbox, 'query_pre_order_status', { preorderId: 'PO-missing' }).code).toBe(SandboxCode.PRE_ORDER_NOT_FOUND);
  });

  it('prices the order of a confirmed pre-order with offerAmount when given', () => {
    const sandbox = createSandbox();
    const preorderId = ok(sandbox, 'create_pre_order', { offerAmount: 42.5 }).preorderId;
    const orderId = sandbox.confirmPreOrder(APP_ID, preorderId);
    expect(ok(sandbox, 'query_account_details', { orderId }).rows[0]).toMatchObject({ costAmount: 42.5 });
  });

  it('auto-confirms on the first status query at least autoConfirmPreOrdersAfterMs after creation', () => {
    const clock = manualClock('2026-01-01T00:00:00.000Z');
    const sandbox = createSandbox({ now: clock.now, autoConfirmPreOrdersAfterMs: 5_000 });
    const preorderId = ok(sandbox, 'create_pre_order', { sellerOrderNo: 'AUTO' }).preorderId;
    clock.advance(4_999);
    expect(ok(sandbox, 'query_pre_order_status', { preorderId }).statusId).toBe(1);
    clock.advance(1);
    const status = ok(sandbox, 'query_pre_order_status', { preorderId });
    expect(status).toMatchObject({ statusId: 2, orderId: expect.stringMatching(/^SO20260101/) });
    const logs = ok(sandbox, 'query_order_logs', { orderId: status.orderId });
    expect(logs[0]).toMatchObject({ opTime: '2026-01-01T00:00:05.000Z', opText: `Order created from pre-order ${preorderId}` });
    // asking again does not create another order
    expect(ok(sandbox, 'query_pre_order_status', { preorderId }).orderId).toBe(status.orderId);
  });

  it('never auto-confirms by default', () => {
    const clock = manualClock('2026-01-01T00:00:00.000Z');
    const sandbox = createSandbox({ now: clock.now });
    const preorderId = ok(sandbox, 'create_pre_order', {}).preorderId;
    clock.advance(365 * 86_400_000);
    expect(ok(sandbox, 'query_pre_order_status', { preorderId }).statusId).toBe(1);
  });
});
