/**
 * courierSchemas for the bodies that describe a shipment: create_order, create_agent_order,
 * billing_fee and create_pre_order (required fields, types, enumerations, cross-field rules).
 */
import { describe, expect, it } from 'vitest';
import { parseWith } from '../../src/core/validation.js';
import { courierSchemas } from '../../src/courier/schemas.js';
import { CREATE_ORDER_REQUIRED, without } from '../support/courier.js';
import { estimate, issuesOf, order, preOrder, rulesOf } from './schema-checks.js';

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
