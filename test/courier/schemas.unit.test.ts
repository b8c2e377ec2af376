/**
 * courierSchemas: one schema per operation, and the requests that name an existing order, account
 * or pre-order (GET operations, cancel_order, the queries). The bodies that describe a shipment
 * are in schemas.orders.unit.test.ts, the empty-string rule across operations in
 * schemas.empty-strings.unit.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseWith } from '../../src/core/validation.js';
import { COURIER_OPERATION_NAMES } from '../../src/courier/operations.js';
import { courierSchemas } from '../../src/courier/schemas.js';
import { issuesOf, rulesOf } from './schema-checks.js';

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

describe('cancel_order', () => {
  const schema = courierSchemas.cancel_order;

  it('accepts orderId with optional fields', () => {
    expect(parseWith(schema, { orderId: 'O-1', pushCompanyId: 'C-1', cancelMemo: 'customer asked' })).toEqual({
      orderId: 'O-1',
      pushCompanyId: 'C-1',
      cancelMemo: 'customer asked',
    });
  });

  it('accepts characters outside the BMP (a whole surrogate pair) and refuses half of one (RFC 8259 8.2)', () => {
    expect(parseWith(schema, { orderId: 'O-\u{1F4E6}', cancelMemo: '\u{1F4E6} 书' })).toEqual({ orderId: 'O-\u{1F4E6}', cancelMemo: '\u{1F4E6} 书' });
    expect(rulesOf(schema, { orderId: 'O-\ud83d', cancelMemo: '\udce6' })).toEqual([
      { field: 'orderId', rule: 'format' },
      { field: 'cancelMemo', rule: 'format' },
    ]);
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
