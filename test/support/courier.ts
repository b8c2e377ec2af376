import { afterAll, beforeAll, expect } from 'vitest';
import { startSandbox, type StartedSandbox } from '../../src/sandbox/index.js';

/** The apps of the sandbox every suite starts. */
export const SANDBOX_APP = { appId: 'sandbox-app', appSecret: 'sandbox-secret' } as const;
export const OTHER_APP = { appId: 'other-app', appSecret: 'other-secret' } as const;
export const SANDBOX_APPS: Record<string, string> = {
  [SANDBOX_APP.appId]: SANDBOX_APP.appSecret,
  [OTHER_APP.appId]: OTHER_APP.appSecret,
};

/** create_order's required fields (docs/courier.md). */
export const CREATE_ORDER_REQUIRED = [
  'orderTypeId',
  'sendTypeId',
  'fetchTypeId',
  'paymentId',
  'expressTypeId',
  'customerCname',
  'customerContacts',
  'customerMobileNumber',
  'customerMansionId',
  'customerFloorId',
  'customerHouseNumber',
  'myContacts',
  'myMobileNumber',
  'myMansionId',
  'myFloorId',
  'myHouseNumber',
  'goodsWeight',
  'goodsCollection',
  'goodsPayment',
] as const;

export const GET_OPERATIONS = ['get_address', 'get_express_type', 'get_express_tags', 'get_balance', 'get_coupon'] as const;

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

let sequence = 0;
/** A sellerOrderNo no other call of this run uses (the sandbox rejects duplicates). */
export function sellerOrderNo(): string {
  sequence += 1;
  return `T${process.pid}-${Date.now().toString(36)}-${sequence}`;
}

export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

export interface Addresses {
  customerMansionId: number;
  customerFloorId: number;
  myMansionId: number;
  myFloorId: number;
}

/** Building/floor ids of the sandbox dictionary, for bodies that never reach the upstream. */
export const STATIC_ADDRESSES: Addresses = { customerMansionId: 1, customerFloorId: 101, myMansionId: 2, myFloorId: 201 };

/** A complete, valid create_order body (paymentId 1: card, so no balance is needed). */
export function orderBody(addresses: Addresses = STATIC_ADDRESSES, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    orderTypeId: 2,
    sendTypeId: 21,
    fetchTypeId: 11,
    paymentId: 1,
    sellerOrderNo: sellerOrderNo(),
    sellerQrcode: 'QR-1',
    createMemo: 'leave at the door',
    expressTypeId: 1,
    expressTagIds: 1,
    customerCname: 'Acme Ltd',
    customerContacts: 'Ana Silva',
    customerMobileNumber: '+853 6612 3456',
    customerHouseNumber: 'A3',
    myContacts: 'Bo Chen',
    myMobileNumber: '(853) 2888-0000',
    myHouseNumber: '12B',
    goodsWeight: 1.5,
    goodsCollection: 0,
    goodsPayment: 0,
    returnPrintImg: 1,
    goods: [{ goodsName: 'Tea', goodsNum: 2, goodsAmount: 30, goodsDesc: 'green' }],
    ...addresses,
    ...overrides,
  };
}

export function preOrderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    orderTypeId: 1,
    sellerOrderNo: sellerOrderNo(),
    expressTypeId: 1,
    customerCname: 'Acme Ltd',
    customerContacts: 'Ana Silva',
    customerMobileNumber: '+853 6612 3456',
    customerAddress: '5 Harbour Road, unit 3',
    myContacts: 'Bo Chen',
    myMobileNumber: '(853) 2888-0000',
    myAddress: '12 Rua Central',
    goodsWeight: 2,
    goodsPayment: 0,
    offerAmount: 15,
    ...overrides,
  };
}

export function without(body: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...body };
  delete copy[key];
  return copy;
}

export interface Envelope {
  code: 0 | 1;
  message: string;
  data: unknown;
}

interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Checks status, JSON content type and the exact envelope shape `{code, message, data}`; returns
 * the envelope. The whole response shows up in the diff when the status or code is wrong.
 */
export function envelope(res: HttpResult, status: number, code: 0 | 1): Envelope {
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    body = res.text;
  }
  expect({ status: res.status, body }).toMatchObject({ status, body: { code } });
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const result = body as Envelope;
  expect(Object.keys(result).sort()).toEqual(['code', 'data', 'message']);
  expect(typeof result.message).toBe('string');
  expect(result.message.length).toBeGreaterThan(0);
  if (code === 0) expect(result.message).toBe('ok');
  expectNothingInternal(res.text);
  return result;
}

/** Data of a successful envelope. */
export function okData<T = Record<string, unknown>>(res: HttpResult): T {
  return envelope(res, 200, 0).data as T;
}

/** No stack frame, no HTML page, no internal file path in a response the caller sees. */
export function expectNothingInternal(text: string): void {
  expect(text).not.toMatch(/\bat\s+\S+\s+\(|\n\s+at\s/);
  expect(text).not.toMatch(/<\/?(html|body|pre|h1)\b/i);
  expect(text).not.toMatch(/node_modules|\/src\/|\.ts:\d+/);
}

/**
 * One sandbox upstream (knowing SANDBOX_APPS) for the calling test file: started before its
 * tests, closed after them. Call the returned function inside a test.
 */
export function sandboxUpstream(): () => StartedSandbox {
  let started: StartedSandbox | undefined;
  beforeAll(async () => {
    started = await startSandbox({ apps: SANDBOX_APPS });
  });
  afterAll(async () => {
    await started?.close();
  });
  return () => {
    if (!started) throw new Error('the sandbox upstream is not running (use it inside a test)');
    return started;
  };
}
