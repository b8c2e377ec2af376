/**
 * courierSchemas across operations: an optional field sent as an empty string counts as not
 * sent, a required one sent empty still fails.
 */
import { describe, expect, it } from 'vitest';
import { parseWith } from '../../src/core/validation.js';
import { courierSchemas } from '../../src/courier/schemas.js';
import { CREATE_ORDER_REQUIRED } from '../support/courier.js';
import { estimate, order, preOrder, rulesOf } from './schema-checks.js';

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
