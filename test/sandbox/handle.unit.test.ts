/**
 * sandbox.handle() in process: the order in which an upstream call is checked, the options, the
 * fee estimate and the dictionaries. Orders, balances, bills and pre-orders are in
 * handle.orders.unit.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { COURIER_OPERATION_NAMES } from '../../src/courier/operations.js';
import { hmacSha256Signer } from '../../src/courier/signing.js';
import { createSandbox, SandboxCode, type SandboxOptions } from '../../src/sandbox/index.js';
import { APP_ID, APP_SECRET, manualClock, ok, orderParams, run, signed } from './helpers.js';

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
