/**
 * The sandbox over HTTP refusing a call: bad signature, unknown app or api, malformed or
 * oversized bodies, a method other than POST, and a signature of the other signer.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { hmacSha256Signer, md5Signer } from '../../src/courier/signing.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { call, orderParams, post, signed, sandboxPerSuite } from './helpers.js';

describe('sandbox over HTTP: rejected calls', () => {
  const upstream = sandboxPerSuite();

  it('bad signature: HTTP 200, code 40001, secret not in the message', async () => {
    const answer = await post(upstream.url, { ...signed('get_balance'), sign: 'ABCDEF' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 40001, data: null });
    expect(answer.body.message).not.toContain('sandbox-secret');
  });

  it('unknown app: HTTP 200, code 40002', async () => {
    const answer = await post(upstream.url, signed('get_balance', {}, { appId: 'stranger' }));
    expect(answer).toMatchObject({ status: 200, body: { code: 40002, message: 'unknown appId "stranger"', data: null } });
  });

  it('unknown api: HTTP 200, code 40003', async () => {
    const answer = await post(upstream.url, signed('get_weather'));
    expect(answer).toMatchObject({ status: 200, body: { code: 40003, data: null } });
  });

  it('malformed JSON: HTTP 400, code 40000', async () => {
    for (const raw of ['{"api":', '', 'not json']) {
      const answer = await post(upstream.url, raw);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ code: 40000, message: 'body is not valid JSON', data: null });
    }
  });

  it('valid JSON that is not an object: HTTP 200, code 40000', async () => {
    const answer = await post(upstream.url, '[1,2]');
    expect(answer).toMatchObject({ status: 200, body: { code: 40000, data: null } });
  });

  it('non-POST: HTTP 405 with Allow: POST', async () => {
    const response = await fetch(upstream.url, { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toMatchObject({ code: 40500, data: null });
  });

  it('body over 1 MiB: HTTP 413 JSON', async () => {
    const big = JSON.stringify({ ...signed('get_address'), padding: 'x'.repeat(1024 * 1024) });
    const response = await fetch(upstream.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 41300, data: null });
    // the server is still fine afterwards
    expect((await call(upstream.url, 'get_address')).code).toBe(0);
  });

  it('body over 1 MiB sent chunked (no Content-Length): HTTP 413 JSON', async () => {
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(upstream.url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      const chunk = 'x'.repeat(64 * 1024);
      req.write('{"padding":"');
      for (let i = 0; i < 17; i++) req.write(chunk);
      req.end('"}');
    });
    expect(status).toBe(413);
    expect(JSON.parse(text)).toMatchObject({ code: 41300, data: null });
  });

  it('the strings it keeps with an order are at most as long as the proxy allows: code 40004, nothing kept', async () => {
    // A body of 1 MiB is accepted, and the sandbox keeps up to 50 000 orders an app: a sellerOrderNo
    // or a cancelMemo of most of a megabyte each would let one caller fill its memory.
    const long = 'x'.repeat(100_000);
    for (const [api, params] of [
      ['create_order', orderParams({ sellerOrderNo: long })],
      ['create_agent_order', orderParams({ sellerOrderNo: long })],
      ['create_pre_order', { sellerOrderNo: long }],
    ] as const) {
      const refused = await call(upstream.url, api, params);
      expect(refused, api).toEqual({ code: 40004, message: 'invalid parameter sellerOrderNo: must be at most 64 characters, got 100000', data: null });
    }
    const order = await call(upstream.url, 'create_order', orderParams({ sellerOrderNo: 'x'.repeat(64) }));
    expect(order.code).toBe(0);
    const memo = await call(upstream.url, 'cancel_order', { orderId: order.data.orderId, cancelMemo: 'm'.repeat(501) });
    expect(memo).toMatchObject({ code: 40004, message: 'invalid parameter cancelMemo: must be at most 500 characters, got 501' });
    expect((await call(upstream.url, 'cancel_order', { orderId: order.data.orderId, cancelMemo: 'm'.repeat(500) })).code).toBe(0);
  });

  it('a body just under 1 MiB is accepted', async () => {
    const base = JSON.stringify(signed('get_address', { padding: '' }));
    const padding = 'x'.repeat(1024 * 1024 - base.length - 200);
    const answer = await post(upstream.url, signed('get_address', { padding }));
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe(0);
  });
});

describe('sandbox over HTTP: signer option', () => {
  it('with hmac-sha256 accepts HMAC signatures and rejects MD5 ones', async () => {
    const upstream = await startSandbox({ signer: 'hmac-sha256' });
    try {
      expect((await call(upstream.url, 'get_address', {}, { signer: hmacSha256Signer })).code).toBe(0);
      expect((await call(upstream.url, 'get_address', {}, { signer: md5Signer })).code).toBe(40001);
    } finally {
      await upstream.close();
    }
  });
});
