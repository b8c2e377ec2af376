import { afterAll, beforeAll, expect } from 'vitest';
import { md5Signer, type Signer } from '../../src/courier/signing.js';
import { startSandbox, type Sandbox, type StartSandboxOptions, type StartedSandbox } from '../../src/sandbox/index.js';

export const APP_ID = 'sandbox-app';
export const APP_SECRET = 'sandbox-secret';

export interface SignOptions {
  appId?: string;
  secret?: string;
  signer?: Signer;
  version?: string;
}

/** The upstream body the proxy would send: params + api, appId, version and sign. */
export function signed(api: string, params: Record<string, unknown> = {}, options: SignOptions = {}): Record<string, unknown> {
  const fields = { ...params, api, appId: options.appId ?? APP_ID, version: options.version ?? '1.0' };
  return { ...fields, sign: (options.signer ?? md5Signer)(fields, options.secret ?? APP_SECRET) };
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: { code: number; message: string; data: any };
}

/** POSTs a JSON value (or a raw string) and parses the JSON answer. */
export async function post(url: string, body: unknown, path = '/'): Promise<HttpAnswer> {
  const response = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as HttpAnswer['body'] };
}

/** Signs and POSTs one upstream call; returns the envelope after checking it came with HTTP 200. */
export async function call(
  url: string,
  api: string,
  params: Record<string, unknown> = {},
  options: SignOptions = {},
): Promise<HttpAnswer['body']> {
  const answer = await post(url, signed(api, params, options));
  if (answer.status !== 200) throw new Error(`expected HTTP 200 for ${api}, got ${answer.status}`);
  return answer.body;
}

/** A valid create_order body: standard, 1 kg, door to door, card payment. */
export function orderParams(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    orderTypeId: 2,
    sendTypeId: 21,
    fetchTypeId: 11,
    paymentId: 1,
    expressTypeId: 1,
    customerCname: 'Acme',
    customerContacts: 'Ann',
    customerMobileNumber: '13800000000',
    customerMansionId: 1,
    customerFloorId: 102,
    customerHouseNumber: '201',
    myContacts: 'Bob',
    myMobileNumber: '13900000000',
    myMansionId: 3,
    myFloorId: 304,
    myHouseNumber: '12',
    goodsWeight: 1,
    goodsCollection: 0,
    goodsPayment: 0,
    ...overrides,
  };
}

/** A clock the test moves by hand. */
export function manualClock(start: string): { now: () => Date; set(iso: string): void; advance(ms: number): void } {
  let current = Date.parse(start);
  return {
    now: () => new Date(current),
    set(iso) {
      current = Date.parse(iso);
    },
    advance(ms) {
      current += ms;
    },
  };
}

/** What sandbox.handle() answers to a signed call, in process. */
export function run(sandbox: Sandbox, api: string, params: Record<string, unknown> = {}, appId = APP_ID, secret = APP_SECRET) {
  return sandbox.handle(signed(api, params, { appId, secret })) as { code: number; message: string; data: any };
}

/** The data of a call sandbox.handle() must answer with code 0. */
export function ok(sandbox: Sandbox, api: string, params: Record<string, unknown> = {}, appId = APP_ID, secret = APP_SECRET): any {
  const envelope = run(sandbox, api, params, appId, secret);
  expect(envelope, `${api}: ${envelope.message}`).toMatchObject({ code: 0, message: 'ok' });
  return envelope.data;
}

/** A sandbox server started before the suite's tests and closed after them; read it within a test. */
export function sandboxPerSuite(options?: StartSandboxOptions): Pick<StartedSandbox, 'url' | 'sandbox'> {
  let started: StartedSandbox | undefined;
  beforeAll(async () => {
    started = await startSandbox(options);
  });
  afterAll(() => started?.close());
  const running = (): StartedSandbox => {
    if (!started) throw new Error('the sandbox starts in beforeAll');
    return started;
  };
  return {
    get url() {
      return running().url;
    },
    get sandbox() {
      return running().sandbox;
    },
  };
}
