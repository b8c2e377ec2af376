import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { COURIER_OPERATION_NAMES } from '../../src/courier/operations.js';
import { hmacSha256Signer } from '../../src/courier/signing.js';
import { createSandbox, SandboxCode, SandboxError, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { APP_ID, APP_SECRET, manualClock, orderParams, signed } from './helpers.js';

function run(sandbox: Sandbox, api: string, params: Record<string, unknown> = {}, appId = APP_ID, secret = APP_SECRET) {
  return sandbox.handle(signed(api, params, { appId, secret })) as { code: number; message: string; data: any };
}

function ok(sandbox: Sandbox, api: string, params: Record<string, unknown> = {}, appId = APP_ID, secret = APP_SECRET): any {
  const envelope = run(sandbox, api, params, appId, secret);
  expect(envelope, `${api}: ${envelope.message}`).toMatchObject({ code: 0, message: 'ok' });
  return envelope.data;
}

describe('sandbox handle(): the check order of an upstream call', () => {
  const sandbox = createSandbox();

  it('rejects a body that is not a JSON object with 40000', () => {
    for (const body of [null, 'text', 42, [signed('get_address')]]) {
      expect(sandbox.handle(body)).toEqual({ code: 40000, message: 'body must be a JSON object', data: null });
    }
  });

  it('checks appId before the signature: unknown app is 40002 even with a bad sign', () => {
    const body = { ...signed('get_address', {}, { appId: 'nobody' }), sign: 'BAD' };
    expect(sandbox.handle(body)).toMatchObject({ code: SandboxCode.UNKNOWN_APP, message: 'unknown appId "nobody"', data: null });
    expect(sandbox.handle({ api: 'get_address', version: '1.0', sign: 'X' })).toMatchObject({ code: 40002 });
  });

  it('checks the signature before the api: an unknown api with a bad sign is 40001', () => {
    const body = { ...signed('no_such_api'), sign: '0'.repeat(32) };
    const envelope = sandbox.handle(body);
    expect(envelope.code).toBe(SandboxCode.INVALID_SIGNATURE);
    expect(envelope.message).toMatch(/invalid signature/);
    expect(envelope.message).not.toContain(APP_SECRET);
  });

  it('rejects a missing sign and a signature over other fields', () => {
    const { sign: _sign, ...unsigned } = signed('get_address');
    expect(sandbox.handle(unsigned)).toMatchObject({ code: 40001, message: 'invalid signature: sign is missing' });
    const tampered = { ...signed('billing_fee', { goodsWeight: 1, expressTypeId: 1 }), goodsWeight: 2 };
    expect(sandbox.handle(tampered).code).toBe(40001);
    const wrongSecret = signed('get_address', {}, { secret: 'guess' });
    expect(sandbox.handle(wrongSecret).code).toBe(40001);
  });

  it('accepts a lowercase hex sign', () => {
    const body = signed('get_express_type');
    expect(sandbox.handle({ ...body, sign: String(body.sign).toLowerCase() }).code).toBe(0);
  });

  it('answers 40003 for an unknown api, including prototype names', () => {
    for (const api of ['no_such_api', 'toString', '__proto__', 'constructor']) {
      expect(run(sandbox, api)).toMatchObject({ code: SandboxCode.UNKNOWN_API, data: null });
    }
    expect(run(sandbox, 'no_such_api').message).toBe('unknown api "no_such_api"');
  });

  it('knows every courier operation of the catalog', () => {
    for (const api of COURIER_OPERATION_NAMES) {
      expect(run(sandbox, api).code, api).not.toBe(SandboxCode.UNKNOWN_API);
    }
  });

  it('turns a throwing custom signer into 50000 without leaking the secret', () => {
    const leaky = createSandbox({
      signer: (_fields, secret) => {
        throw new Error(`cannot sign with ${secret}`);
      },
    });
    const envelope = leaky.handle({ api: 'get_address', appId: APP_ID, version: '1.0', sign: 'X' });
    expect(envelope.code).toBe(SandboxCode.INTERNAL_ERROR);
    expect(envelope.message).not.toContain(APP_SECRET);
    expect(envelope.message).toContain('***');
  });

  it('uses the configured signer preset', () => {
    const hmac = createSandbox({ signer: 'hmac-sha256' });
    expect(hmac.handle(signed('get_address')).code).toBe(40001);
    expect(hmac.handle(signed('get_address', {}, { signer: hmacSha256Signer })).code).toBe(0);
  });
});

describe('sandbox options are checked at creation', () => {
  it.each<[string, unknown, string]>([
    ['options not an object', 'sandbox-app', 'options'],
    ['an unknown key', { app: {} }, 'app'],
    ['apps not an object', { apps: 'sandbox-app' }, 'apps'],
    ['an empty secret', { apps: { a: '' } }, 'apps["a"]'],
    ['no apps', { apps: {} }, 'apps'],
    ['an unknown signer', { signer: 'sha1' }, 'signer'],
    ['a clock that is not a function', { now: 5 }, 'now'],
    ['a negative autoConfirm', { autoConfirmPreOrdersAfterMs: -1 }, 'autoConfirmPreOrdersAfterMs'],
    ['an unknown balance key', { initialBalance: { cash: 1 } }, 'initialBalance.cash'],
    ['isCredit other than 0/1', { initialBalance: { isCredit: 2 } }, 'initialBalance.isCredit'],
    ['a fractional creditDays', { initialBalance: { creditDays: 1.5 } }, 'initialBalance.creditDays'],
    ['a non-integer maxOrdersPerApp', { maxOrdersPerApp: 1.5 }, 'maxOrdersPerApp'],
  ])('throws a ConfigurationError for %s, naming %s', (_name, options, field) => {
    let thrown: unknown;
    try {
      createSandbox(options as SandboxOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect(thrown).toMatchObject({ code: 'invalid_option', field });
    expect((thrown as ConfigurationError).message).toContain(`${field}: `);
  });

  it('never puts a secret in an option error', () => {
    expect(() => createSandbox({ apps: { good: 'top-secret', bad: 7 as unknown as string } })).toThrow(/apps\["bad"\]/);
    try {
      createSandbox({ apps: { good: 'top-secret', bad: '' } });
    } catch (error) {
      expect(String(error)).not.toContain('top-secret');
    }
  });
});

describe('sandbox handle(): fee estimate (billing_fee)', () => {
  const sandbox = createSandbox();

  it('prices standard 1 kg door to door as 8 + 3 + 3', () => {
    expect(ok(sandbox, 'billing_fee', orderParams())).toEqual({
      serviceCharge: 14,
      payAmount: 14,
      fetchServiceCharge: 3,
      sendServiceCharge: 3,
      overweightServiceCharge: 0,
      surcharge: [],
      couponAmount: 0,
    });
  });

  it('counts each started kg, tags as surcharge lines, and a coupon', () => {
    const fee = ok(sandbox, 'billing_fee', orderParams({ goodsWeight: 2.5, expressTagIds: 5, couponId: 9001 }));
    // 8 + 2 * 2 freight, 3 + 3 fetch/send, 2 fragile + 8 cold chain = 28; coupon 5
    expect(fee).toMatchObject({ serviceCharge: 28, couponAmount: 5, payAmount: 23 });
    expect(fee.surcharge).toEqual([
      { expressTagId: 1, name: 'Fragile', amount: 2 },
      { expressTagId: 4, name: 'Cold chain', amount: 8 },
    ]);
  });

  it('charges overweight above 20 kg and nothing for store pick-up / delivery', () => {
    const fee = ok(
      sandbox,
      'billing_fee',
      orderParams({ expressTypeId: 2, goodsWeight: 22.3, orderTypeId: 2, fetchTypeId: 12, sendTypeId: 22 }),
    );
    // 12 + 19 * 3 = 69 up to 20 kg; 3 kg over at 5 = 15
    expect(fee).toMatchObject({ serviceCharge: 84, overweightServiceCharge: 15, fetchServiceCharge: 0, sendServiceCharge: 0 });
  });

  it('works with the minimal fields and accepts numeric strings', () => {
    expect(ok(sandbox, 'billing_fee', { expressTypeId: '3', goodsWeight: '0.4' })).toMatchObject({ serviceCharge: 20, payAmount: 20 });
  });

  it('accepts every combination of the tag bits', () => {
    expect(ok(sandbox, 'billing_fee', orderParams({ expressTagIds: 15 })).surcharge).toHaveLength(4);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['unknown expressTypeId', { expressTypeId: 9 }, /expressTypeId: 9 is not an express type/],
    ['missing expressTypeId', { expressTypeId: undefined }, /expressTypeId: is required/],
    ['unknown mansion', { customerMansionId: 99 }, /customerMansionId: 99 is not a building/],
    ['unknown floor', { myFloorId: 999 }, /myFloorId: 999 is not a floor/],
    ['floor of another building', { customerFloorId: 201 }, /customerFloorId: floor 201 is not in building 1/],
    ['an unknown tag bit', { expressTagIds: 16 }, /expressTagIds: 16 is not a combination/],
    ['a negative tag value', { expressTagIds: -1 }, /expressTagIds/],
    ['zero weight', { goodsWeight: 0 }, /goodsWeight: must be > 0/],
    ['missing weight', { goodsWeight: undefined }, /goodsWeight: is required/],
    ['a text weight', { goodsWeight: 'heavy' }, /goodsWeight: must be a number/],
    ['store delivery on a pick-up order', { orderTypeId: 1, fetchTypeId: 12 }, /fetchTypeId: 12/],
    ['collect-on-behalf on a delivery order', { orderTypeId: 2, fetchTypeId: 13 }, /fetchTypeId: 13/],
    ['an unknown sendTypeId', { sendTypeId: 23 }, /sendTypeId: must be one of 21, 22/],
    ['an unknown coupon', { couponId: 1 }, /couponId: 1 is not a valid coupon/],
  ])('answers 40004 naming the field for %s', (_name, overrides, message) => {
    const envelope = run(sandbox, 'billing_fee', orderParams(overrides));
    expect(envelope.code).toBe(SandboxCode.INVALID_PARAMETER);
    expect(envelope.message).toMatch(message);
    expect(envelope.data).toBeNull();
  });
});

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

describe('sandbox handle(): coupons and dictionaries', () => {
  it('derives coupon validity from the clock so the coupons are valid now', () => {
    const clock = manualClock('2026-07-10T08:30:00.000Z');
    const coupons = ok(createSandbox({ now: clock.now }), 'get_coupon');
    expect(coupons.length).toBeGreaterThan(0);
    for (const coupon of coupons) {
      expect(coupon).toEqual({
        couponId: expect.any(Number),
        validityBtime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        validityEtime: expect.stringMatching(/Z$/),
        couponAmount: expect.any(Number),
      });
      expect(Date.parse(coupon.validityBtime)).toBeLessThanOrEqual(clock.now().getTime());
      expect(Date.parse(coupon.validityEtime)).toBeGreaterThan(clock.now().getTime());
    }
  });

  it('serves frozen dictionaries that a caller cannot corrupt', () => {
    const sandbox = createSandbox();
    const address = ok(sandbox, 'get_address');
    expect(Object.isFrozen(address)).toBe(true);
    expect(Object.isFrozen(address[0].floors[0])).toBe(true);
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
