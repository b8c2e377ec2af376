import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError, type FieldIssue } from '../../src/core/errors.js';
import { parseWith } from '../../src/core/validation.js';
import { COURIER_OPERATION_NAMES } from '../../src/courier/operations.js';
import { courierSchemas } from '../../src/courier/schemas.js';
import { CREATE_ORDER_REQUIRED, orderBody, without } from '../support/courier.js';

/** The issues a body produces; fails the test if the body unexpectedly parses. */
function issuesOf(schema: z.ZodType, input: unknown): readonly FieldIssue[] {
  try {
    parseWith(schema, input);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues;
    throw error;
  }
  throw new Error('expected a ValidationError, but the input parsed');
}

/** Field and rule only, for comparing the whole list without repeating every message. */
function rulesOf(schema: z.ZodType, input: unknown): { field: string; rule: string }[] {
  return issuesOf(schema, input).map(({ field, rule }) => ({ field, rule }));
}

// Balance payment (12), the normal-order value the agent-order tests set against.
const order = orderBody(undefined, { paymentId: 12 });


const estimate = {
  orderTypeId: 1,
  sendTypeId: 22,
  fetchTypeId: 13,
  paymentId: 1,
  expressTypeId: 3,
  customerMansionId: 10,
  customerFloorId: 101,
  myMansionId: 20,
  myFloorId: 201,
  goodsWeight: 0.2,
};

const preOrder = {
  orderTypeId: 1,
  expressTypeId: 3,
  customerContacts: 'Ana Silva',
  customerMobileNumber: '66123456',
  customerAddress: 'Rua do Campo 12, 3rd floor',
  myContacts: 'Bo Chen',
  myMobileNumber: '28880000',
  myAddress: 'Avenida Central 5',
  goodsWeight: 2,
};

describe('courierSchemas: coverage', () => {
  it('has exactly one schema per courier operation', () => {
    expect(Object.keys(courierSchemas).sort()).toEqual([...COURIER_OPERATION_NAMES].sort());
    for (const name of COURIER_OPERATION_NAMES) expect(courierSchemas[name]).toBeInstanceOf(z.ZodType);
  });
});

describe('GET operations', () => {
  const getOperations = ['get_address', 'get_express_type', 'get_express_tags', 'get_balance', 'get_coupon'] as const;

  it.each(getOperations)('%s accepts an empty query', (name) => {
    expect(parseWith(courierSchemas[name], {})).toEqual({});
  });

  it.each(getOperations)('%s rejects any query key as unknown_field', (name) => {
    expect(rulesOf(courierSchemas[name], { page: '1' })).toEqual([{ field: 'page', rule: 'unknown_field' }]);
  });
});

describe('create_order', () => {
  const schema = courierSchemas.create_order;

  it('accepts a complete order with goods and returns strings trimmed', () => {
    const parsed = parseWith(schema, {
      ...order,
      customerContacts: '  Ana Silva ',
      goods: [{ goodsName: ' Tea\t', goodsNum: 2 }],
    });
    expect(parsed.customerContacts).toBe('Ana Silva');
    expect(parsed.goods).toEqual([{ goodsName: 'Tea', goodsNum: 2 }]);
    expect(parsed.paymentId).toBe(12);
  });

  it('accepts an order without any optional field', () => {
    const minimal = Object.fromEntries(CREATE_ORDER_REQUIRED.map((key) => [key, order[key]]));
    expect(parseWith(schema, minimal)).toEqual(minimal);
  });

  it.each(CREATE_ORDER_REQUIRED)('reports missing %s as required', (field) => {
    expect(issuesOf(schema, without(order, field))).toEqual([{ field, rule: 'required', message: 'is required' }]);
  });

  it('reports wrong types per field', () => {
    expect(
      rulesOf(schema, { ...order, goodsWeight: '1.5', customerMansionId: 1.5, customerContacts: 7, goods: {} }),
    ).toEqual([
      { field: 'customerContacts', rule: 'type' },
      { field: 'customerMansionId', rule: 'integer' },
      { field: 'goodsWeight', rule: 'type' },
      { field: 'goods', rule: 'type' },
    ]);
  });

  it('rejects a body that is not an object', () => {
    expect(rulesOf(schema, [order])).toEqual([{ field: '(body)', rule: 'type' }]);
  });

  it.each([
    ['orderTypeId', 3, 'must be one of 1, 2'],
    ['sendTypeId', 20, 'must be one of 21, 22'],
    ['fetchTypeId', 14, 'must be one of 11, 12, 13'],
    ['paymentId', 2, 'must be one of 1, 11, 12'],
    ['returnPrintImg', 2, 'must be one of 0, 1'],
    ['orderTypeId', '1', 'must be one of 1, 2'],
  ])('rejects %s = %j with the allowed values', (field, value, message) => {
    expect(issuesOf(schema, { ...order, [field]: value })).toEqual([{ field, rule: 'enum', message }]);
  });

  it.each([
    ['goodsWeight', 0, 'min'],
    ['goodsCollection', -1, 'min'],
    ['expressTypeId', 0, 'min'],
    ['expressTagIds', -1, 'min'],
    ['customerContacts', '   ', 'min_length'],
    ['customerHouseNumber', 'x'.repeat(65), 'max_length'],
    ['customerMobileNumber', '6612-3456 ext 7', 'format'],
    ['sellerOrderNo', 'x'.repeat(65), 'max_length'],
  ])('rejects %s = %j by rule %s', (field, value, rule) => {
    expect(rulesOf(schema, { ...order, [field]: value })).toEqual([{ field, rule }]);
  });

  it('accepts international phone notations without imposing a country format', () => {
    for (const phone of ['+86 138 0013 8000', '(853) 2888-0000', '0044 20 7946 0958']) {
      expect(parseWith(schema, { ...order, myMobileNumber: phone }).myMobileNumber).toBe(phone);
    }
  });

  it('rejects fetchTypeId 12 (deliver to a store) for a pick-up order', () => {
    expect(issuesOf(schema, { ...order, orderTypeId: 1, fetchTypeId: 12 })).toEqual([
      {
        field: 'fetchTypeId',
        rule: 'fetch_type_for_order_type',
        message: 'fetchTypeId 12 (deliver to a store) is only allowed when orderTypeId is 2 (deliver goods)',
      },
    ]);
  });

  it('rejects fetchTypeId 13 (collect on behalf) for a delivery order', () => {
    expect(issuesOf(schema, { ...order, orderTypeId: 2, fetchTypeId: 13 })).toEqual([
      {
        field: 'fetchTypeId',
        rule: 'fetch_type_for_order_type',
        message: 'fetchTypeId 13 (collect goods on behalf) is only allowed when orderTypeId is 1 (pick up goods)',
      },
    ]);
  });

  it('accepts fetchTypeId 12 for delivery and 13 for pick-up orders', () => {
    expect(parseWith(schema, { ...order, orderTypeId: 2, fetchTypeId: 12 }).fetchTypeId).toBe(12);
    expect(parseWith(schema, { ...order, orderTypeId: 1, fetchTypeId: 13 }).fetchTypeId).toBe(13);
  });

  it('reports the cross-field rule together with unrelated field errors', () => {
    expect(rulesOf(schema, { ...order, orderTypeId: 1, fetchTypeId: 12, goodsWeight: -1, orderTypeID: 1 })).toEqual([
      { field: 'goodsWeight', rule: 'min' },
      { field: 'orderTypeID', rule: 'unknown_field' },
      { field: 'fetchTypeId', rule: 'fetch_type_for_order_type' },
    ]);
  });

  it('reports only the single-field error when a compared field is itself invalid', () => {
    expect(rulesOf(schema, { ...order, orderTypeId: 3, fetchTypeId: 12 })).toEqual([
      { field: 'orderTypeId', rule: 'enum' },
    ]);
  });

  it('accepts paymentId 11 (credit) and rejects paymentId 2 (agent wallet)', () => {
    expect(parseWith(schema, { ...order, paymentId: 11 }).paymentId).toBe(11);
    expect(rulesOf(schema, { ...order, paymentId: 2 })).toEqual([{ field: 'paymentId', rule: 'enum' }]);
  });

  it('requires goodsName in every goods line', () => {
    const goods = [{ goodsName: 'Tea' }, { goodsNum: 1 }];
    expect(issuesOf(schema, { ...order, goods: [goods[1]] })).toEqual([
      { field: 'goods[0].goodsName', rule: 'required', message: 'is required' },
    ]);
    expect(rulesOf(schema, { ...order, goods })).toEqual([{ field: 'goods[1].goodsName', rule: 'required' }]);
  });

  it('rejects unknown fields in a goods line and more than 100 lines', () => {
    expect(rulesOf(schema, { ...order, goods: [{ goodsName: 'Tea', price: 3 }] })).toEqual([
      { field: 'goods[0].price', rule: 'unknown_field' },
    ]);
    const tooMany = Array.from({ length: 101 }, () => ({ goodsName: 'Tea' }));
    expect(rulesOf(schema, { ...order, goods: tooMany })).toEqual([{ field: 'goods', rule: 'max_items' }]);
  });

  it('rejects a misspelt field as unknown_field', () => {
    expect(issuesOf(schema, { ...order, orderTypeID: 2 })).toEqual([
      { field: 'orderTypeID', rule: 'unknown_field', message: 'is not a field of this operation' },
    ]);
  });
});

describe('create_agent_order', () => {
  const schema = courierSchemas.create_agent_order;

  it('accepts paymentId 1 and 2 and rejects the normal-order paymentId 11', () => {
    expect(parseWith(schema, { ...order, paymentId: 2 }).paymentId).toBe(2);
    expect(parseWith(schema, { ...order, paymentId: 1 }).paymentId).toBe(1);
    expect(issuesOf(schema, { ...order, paymentId: 11 })).toEqual([
      { field: 'paymentId', rule: 'enum', message: 'must be one of 1, 2' },
    ]);
  });

  it('applies the same required fields and fetch-type rule as create_order', () => {
    expect(rulesOf(schema, without({ ...order, paymentId: 2 }, 'myHouseNumber'))).toEqual([
      { field: 'myHouseNumber', rule: 'required' },
    ]);
    expect(rulesOf(schema, { ...order, paymentId: 2, orderTypeId: 1, fetchTypeId: 12 })).toEqual([
      { field: 'fetchTypeId', rule: 'fetch_type_for_order_type' },
    ]);
  });
});

describe('billing_fee', () => {
  const schema = courierSchemas.billing_fee;

  it('accepts the minimal estimate body', () => {
    expect(parseWith(schema, estimate)).toEqual(estimate);
  });

  it('accepts every create_order field', () => {
    expect(parseWith(schema, order)).toEqual(order);
  });

  it.each(Object.keys(estimate))('reports missing %s as required', (field) => {
    expect(rulesOf(schema, without(estimate, field))).toEqual([{ field, rule: 'required' }]);
  });

  it('applies the enumerations, the fetch-type rule and unknown-field check', () => {
    expect(rulesOf(schema, { ...estimate, paymentId: 2 })).toEqual([{ field: 'paymentId', rule: 'enum' }]);
    expect(rulesOf(schema, { ...estimate, orderTypeId: 2 })).toEqual([
      { field: 'fetchTypeId', rule: 'fetch_type_for_order_type' },
    ]);
    expect(rulesOf(schema, { ...estimate, weight: 1 })).toEqual([{ field: 'weight', rule: 'unknown_field' }]);
  });

  it('still checks optional fields when they are sent', () => {
    expect(rulesOf(schema, { ...estimate, goods: [{ goodsNum: 1 }] })).toEqual([
      { field: 'goods[0].goodsName', rule: 'required' },
    ]);
  });
});

describe('cancel_order', () => {
  const schema = courierSchemas.cancel_order;

  it('accepts orderId with optional fields', () => {
    expect(parseWith(schema, { orderId: 'O-1', pushCompanyId: 'C-1', cancelMemo: 'customer asked' })).toEqual({
      orderId: 'O-1',
      pushCompanyId: 'C-1',
      cancelMemo: 'customer asked',
    });
  });

  it('requires orderId', () => {
    expect(rulesOf(schema, { cancelMemo: 'customer asked' })).toEqual([{ field: 'orderId', rule: 'required' }]);
  });
});

describe('query_order_logs', () => {
  const schema = courierSchemas.query_order_logs;

  it('accepts orderId alone or sellerOrderNo alone', () => {
    expect(parseWith(schema, { orderId: 'O-1' })).toEqual({ orderId: 'O-1' });
    expect(parseWith(schema, { sellerOrderNo: 'ERP-1', pushCompanyId: 'C-1' })).toEqual({
      sellerOrderNo: 'ERP-1',
      pushCompanyId: 'C-1',
    });
  });

  it('asks for orderId or sellerOrderNo when neither is sent', () => {
    expect(issuesOf(schema, { pushCompanyId: 'C-1' })).toEqual([
      { field: 'orderId', rule: 'one_of_required', message: 'send orderId or sellerOrderNo' },
    ]);
  });

  it('reports a wrongly typed sellerOrderNo as a type error, not as missing', () => {
    expect(rulesOf(schema, { sellerOrderNo: 42 })).toEqual([{ field: 'sellerOrderNo', rule: 'type' }]);
  });
});

describe('query_account_details', () => {
  const schema = courierSchemas.query_account_details;

  it('accepts a valid range, including a single day and a leap day', () => {
    expect(parseWith(schema, { startDate: '2026-01-01', endDate: '2026-01-31' })).toEqual({
      startDate: '2026-01-01',
      endDate: '2026-01-31',
    });
    expect(parseWith(schema, { startDate: '2024-02-29', endDate: '2024-02-29', orderId: 'O-1' })).toBeDefined();
  });

  it('requires both dates', () => {
    expect(rulesOf(schema, {})).toEqual([
      { field: 'startDate', rule: 'required' },
      { field: 'endDate', rule: 'required' },
    ]);
  });

  it.each(['2026/01/01', '26-01-01', '2026-1-1', '2026-01-01T00:00:00Z'])('rejects %s by rule format', (value) => {
    expect(issuesOf(schema, { startDate: value, endDate: '2026-12-31' })).toEqual([
      { field: 'startDate', rule: 'format', message: 'must be a date in YYYY-MM-DD form' },
    ]);
  });

  it.each(['2026-02-30', '2025-02-29', '2026-13-01', '2026-04-31', '2026-01-00'])(
    'rejects the impossible date %s by rule date',
    (value) => {
      expect(issuesOf(schema, { startDate: '2026-01-01', endDate: value })).toEqual([
        { field: 'endDate', rule: 'date', message: 'is not a real calendar date' },
      ]);
    },
  );

  it('rejects a start after the end at endDate', () => {
    expect(rulesOf(schema, { startDate: '2026-03-02', endDate: '2026-03-01' })).toEqual([
      { field: 'endDate', rule: 'date_range' },
    ]);
  });

  it('does not compare dates when one of them is invalid', () => {
    expect(rulesOf(schema, { startDate: '2026-12-31', endDate: '2026-02-30' })).toEqual([
      { field: 'endDate', rule: 'date' },
    ]);
  });
});

describe('create_pre_order', () => {
  const schema = courierSchemas.create_pre_order;

  it('accepts the minimal body and the optional fields', () => {
    expect(parseWith(schema, preOrder)).toEqual(preOrder);
    const full = {
      ...preOrder,
      pushCompanyId: 'C-1',
      sellerOrderNo: 'ERP-2',
      expressTagIds: 0,
      customerCname: 'Acme Ltd',
      goodsPayment: 10,
      offerAmount: 2.5,
      returnPrintImg: 0,
    };
    expect(parseWith(schema, full)).toEqual(full);
  });

  it.each(Object.keys(preOrder))('reports missing %s as required', (field) => {
    expect(rulesOf(schema, without(preOrder, field))).toEqual([{ field, rule: 'required' }]);
  });

  it('rejects create_order address ids, which a pre-order does not take', () => {
    expect(rulesOf(schema, { ...preOrder, customerMansionId: 10 })).toEqual([
      { field: 'customerMansionId', rule: 'unknown_field' },
    ]);
  });
});

describe('query_pre_order_status', () => {
  const schema = courierSchemas.query_pre_order_status;

  it('accepts preorderId', () => {
    expect(parseWith(schema, { preorderId: 'P-1', pushCompanyId: 'C-1' })).toEqual({
      preorderId: 'P-1',
      pushCompanyId: 'C-1',
    });
  });

  it('requires preorderId', () => {
    expect(rulesOf(schema, { pushCompanyId: 'C-1' })).toEqual([{ field: 'preorderId', rule: 'required' }]);
  });
});

describe('an optional field sent as an empty string counts as not sent', () => {
  /** The parsed keys: a field left out is absent, not present with `undefined`. */
  const keysOf = (value: Record<string, unknown>) => Object.keys(value).sort();

  it('create_order: empty or blank optional strings and numbers are left out, in goods lines too', () => {
    const parsed = parseWith(courierSchemas.create_order, {
      ...order,
      sellerOrderNo: '',
      sellerQrcode: '   ',
      createMemo: '',
      expressTagIds: '',
      returnPrintImg: '',
      goods: [{ goodsName: 'Tea', goodsDesc: '', goodsNum: '' }],
    });
    expect(keysOf(parsed)).toEqual([...CREATE_ORDER_REQUIRED, 'goods'].sort());
    expect(parsed.goods).toEqual([{ goodsName: 'Tea' }]);
  });

  it('create_order: a required field sent empty still fails, as too short or as the wrong type', () => {
    expect(rulesOf(courierSchemas.create_order, { ...order, customerCname: '', myHouseNumber: ' ', goodsWeight: '' })).toEqual([
      { field: 'customerCname', rule: 'min_length' },
      { field: 'myHouseNumber', rule: 'min_length' },
      { field: 'goodsWeight', rule: 'type' },
    ]);
    expect(rulesOf(courierSchemas.create_order, { ...order, goods: [{ goodsName: '' }] })).toEqual([{ field: 'goods[0].goodsName', rule: 'min_length' }]);
  });

  it('billing_fee: a create_order field that an estimate does not need may be sent empty; goodsWeight may not', () => {
    const parsed = parseWith(courierSchemas.billing_fee, { ...estimate, customerCname: '', customerHouseNumber: '' });
    expect(keysOf(parsed)).toEqual(keysOf(estimate));
    expect(rulesOf(courierSchemas.billing_fee, { ...estimate, goodsWeight: '' })).toEqual([{ field: 'goodsWeight', rule: 'type' }]);
  });

  it('cancel_order: cancelMemo and pushCompanyId empty are left out; orderId empty fails', () => {
    expect(parseWith(courierSchemas.cancel_order, { orderId: 'O-1', pushCompanyId: '', cancelMemo: '' })).toStrictEqual({ orderId: 'O-1' });
    expect(rulesOf(courierSchemas.cancel_order, { orderId: '' })).toEqual([{ field: 'orderId', rule: 'min_length' }]);
  });

  it('query_order_logs: orderId and sellerOrderNo both empty count as neither sent', () => {
    expect(rulesOf(courierSchemas.query_order_logs, { orderId: '', sellerOrderNo: ' ' })).toEqual([{ field: 'orderId', rule: 'one_of_required' }]);
    expect(parseWith(courierSchemas.query_order_logs, { orderId: 'O-1', sellerOrderNo: '' })).toStrictEqual({ orderId: 'O-1' });
  });

  it('query_account_details, create_pre_order, query_pre_order_status: the same rule', () => {
    expect(parseWith(courierSchemas.query_account_details, { startDate: '2026-01-01', endDate: '2026-01-31', orderId: '' })).toStrictEqual({
      startDate: '2026-01-01',
      endDate: '2026-01-31',
    });
    expect(rulesOf(courierSchemas.query_account_details, { startDate: '', endDate: '2026-01-31' })).toEqual([{ field: 'startDate', rule: 'format' }]);
    expect(parseWith(courierSchemas.create_pre_order, { ...preOrder, customerCname: '', offerAmount: '' })).toStrictEqual(preOrder);
    expect(rulesOf(courierSchemas.create_pre_order, { ...preOrder, customerAddress: '' })).toEqual([{ field: 'customerAddress', rule: 'min_length' }]);
    expect(parseWith(courierSchemas.query_pre_order_status, { preorderId: 'P-1', pushCompanyId: '' })).toStrictEqual({ preorderId: 'P-1' });
  });

  it('an empty unknown field is still an unknown field', () => {
    expect(rulesOf(courierSchemas.cancel_order, { orderId: 'O-1', memo: '' })).toEqual([{ field: 'memo', rule: 'unknown_field' }]);
  });
});
