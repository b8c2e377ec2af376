/**
 * Control characters are Unicode's whole Cc category: C0, DEL and C1 (U+0080–U+009F). No client
 * id, subject, API path or name holds one, so wherever the admin API and get_quota take such text
 * they are a 400 naming the field, cursors that name one included; letters beyond ASCII are text.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cursorOf } from '../../src/admin/paging.js';
import { accessToken, ADAPTER_NAMES, closeHosts, CONFIDENTIAL, getQuota, startHost, type QuotaHost } from '../http/quota-helpers.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
/** NEL, a C1 line break, and CSI, which a terminal reads as the start of an escape sequence. */
const C1 = ['\u0085', '\u009b', '\u0080', '\u009f'];

afterEach(closeHosts);

const host = (adapter: (typeof ADAPTER_NAMES)[number]) => startHost(adapter, { quota: {}, platform: { admin: { token: TOKEN } } });

async function refused(h: QuotaHost, method: 'get' | 'delete', path: string, query: Record<string, string>, field: string): Promise<void> {
  const res = await h.http()[method](`${path}?${new URLSearchParams(query)}`).set(OPERATOR);
  expect([res.status, res.body.data?.errors?.[0]?.field], `${method} ${path} ${JSON.stringify(query)}`).toEqual([400, field]);
}

describe.each(ADAPTER_NAMES)('C1 control characters on %s', (adapter) => {
  it('are a 400 naming the id, the path or the cursor that holds one, as C0 and DEL are', async () => {
    const h = await host(adapter);
    for (const c1 of C1) {
      await refused(h, 'get', '/admin/usage', { client_id: `app${c1}x` }, 'client_id');
      await refused(h, 'delete', '/admin/usage', { client_id: `app${c1}x` }, 'client_id');
      await refused(h, 'get', '/admin/usage/history', { client_id: `app${c1}x` }, 'client_id');
      await refused(h, 'delete', '/admin/rules', { scope: 'client', api_path: '/openapi/v1/ping', client_id: `app${c1}x` }, 'client_id');
      await refused(h, 'delete', '/admin/grants', { client_id: CONFIDENTIAL.id, sub: `user${c1}` }, 'sub');
      // A cursor spelled exactly as one, naming a key no page ends on: no client id or API path holds a control character.
      await refused(h, 'get', '/admin/clients', { cursor: cursorOf(`app${c1}`) }, 'cursor');
      await refused(h, 'get', '/admin/usage', { client_id: CONFIDENTIAL.id, cursor: cursorOf(`/openapi/v1/${c1}`) }, 'cursor');
    }
  });

  it('are refused in a client name; a name or path in letters beyond ASCII is text', async () => {
    const h = await host(adapter);
    const register = (name: string) => h.http().post('/admin/clients').set(OPERATOR).send({ name, redirectUris: ['https://shop.example/cb'] });
    const named = await register('Shop\u0085app');
    expect([named.status, named.body.data?.errors?.[0]?.field, named.body.data?.errors?.[0]?.message]).toEqual([400, 'name', 'must not contain control characters']);
    const uri = await register('Shop');
    expect(uri.status).toBe(201);
    const renamed = await h.http().patch(`/admin/clients/${uri.body.data.client.id}`).set(OPERATOR).send({ name: 'Caf\u009b' });
    expect([renamed.status, renamed.body.data?.errors?.[0]?.field]).toEqual([400, 'name']);
    const accented = await register('Café Ümlaut ☕ 商店');
    expect([accented.status, accented.body.data.client.name]).toEqual([201, 'Café Ümlaut ☕ 商店']);

    const { token } = await accessToken(h, CONFIDENTIAL);
    const nel = await getQuota(h, token, '/openapi/v1/a\u0085b');
    expect([nel.status, nel.body.message]).toEqual([400, expect.stringContaining('api_path must not contain control characters')]);
    const cafe = await getQuota(h, token, '/openapi/v1/café');
    expect([cafe.status, cafe.body.data.api_path]).toEqual([200, '/openapi/v1/caf%c3%a9']);
    const history = await h.http().get(`/admin/usage/history?${new URLSearchParams({ client_id: CONFIDENTIAL.id, api_path: '/openapi/v1/café' })}`).set(OPERATOR);
    expect(history.status).toBe(200);
  });
});
