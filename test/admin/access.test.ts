/**
 * Who may call the admin API (docs/operator.md), through HTTP on every adapter: nobody without
 * credentials (401), a wrong token or a refused operator (403), the token or the host's check
 * (200); and a bad query is a 400 naming the parameter. The grants route is the probe: it ends a
 * user's grants for real.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, closeHosts, CONFIDENTIAL, startHost, transactionOf, type TestHost } from '../oauth/compliance/helpers.js';
import { rawHeader } from '../support/raw-header.js';

afterEach(closeHosts);

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = 'x-operator';

/**
 * The host's check: Express, Connect and Fastify hand over their request, Koa `ctx` (plain
 * `headers`), fetch its `Request` (`Headers`), Hono its context (`c.req.header()`).
 */
function operatorCheck(raw: unknown): boolean | null {
  const value = rawHeader(raw, OPERATOR);
  if (value === undefined) return null;
  if (value === 'throw') throw new Error('session store down');
  return value === 'yes';
}

function revokeGrants(host: TestHost, headers: Record<string, string>, query = `client_id=${CONFIDENTIAL.id}&sub=user-alice`) {
  return host.http().delete(`/admin/grants?${query}`).set(headers);
}

describe.each(ADAPTER_NAMES)('admin API access on %s', (adapter) => {
  it('answers 401 with a Bearer challenge without credentials, 403 for a wrong token, and admits the token', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const none = await revokeGrants(host, {});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="admin"');
    expect(none.body).toMatchObject({ code: 1, data: null });
    expect(none.body.message).toBe('The admin API needs an operator: send `Authorization: Bearer <admin token>`');

    const wrong = await revokeGrants(host, { authorization: `Bearer ${TOKEN}x` });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe(1);
    expect(JSON.stringify(wrong.body)).not.toContain(TOKEN);

    const tokens = await host.tokens({ scope: 'openid offline_access' });
    const ok = await revokeGrants(host, { authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ code: 0, message: 'ok', data: { client_id: CONFIDENTIAL.id, sub: 'user-alice', revoked: 1 } });
    // The grant is gone and the consent forgotten.
    expect((await host.userinfo(tokens.access_token)).status).toBe(401);
    transactionOf(await host.authorize({ scope: 'openid offline_access' }, { user: 'alice' }));
    // Nothing left to end: the answer says so.
    expect((await revokeGrants(host, { authorization: `Bearer ${TOKEN}` })).body.data.revoked).toBe(0);
  });

  it('RFC 9111 5.2.2.5: no cache keeps an answer of the admin API, reads and errors included', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const path of ['/admin/clients', '/admin/rules', '/admin/metrics', `/admin/usage?client_id=${CONFIDENTIAL.id}`, `/admin/usage/history?client_id=${CONFIDENTIAL.id}`]) {
      const answer = await host.http().get(path).set(auth);
      expect(answer.status, path).toBe(200);
      expect(answer.headers['cache-control'], path).toBe('no-store');
    }
    expect((await revokeGrants(host, auth)).headers['cache-control']).toBe('no-store');
    // Errors too: a 404 is cacheable by default (RFC 9111 4.2.2), and would outlive the client it denies.
    const errors = [
      await host.http().get('/admin/clients/no-such-client').set(auth),
      await host.http().get('/admin/clients?limit=abc').set(auth),
      await host.http().get('/admin/clients'),
      await host.http().put('/admin/clients').set(auth),
      await host.http().get('/admin/no-such-route').set(auth),
    ];
    expect(errors.map((answer) => answer.status)).toEqual([404, 400, 401, 405, 404]);
    for (const answer of errors) expect(answer.headers['cache-control'], String(answer.status)).toBe('no-store');
  });

  it("follows the host's operator check: true admits, false is 403, no answer is 401, a throw is a 500 without its message", async () => {
    const host = await startHost(adapter, { platform: { admin: { authorize: operatorCheck } } });
    expect((await revokeGrants(host, { [OPERATOR]: 'yes' })).status).toBe(200);
    expect((await revokeGrants(host, { [OPERATOR]: 'no' })).status).toBe(403);
    const anonymous = await revokeGrants(host, {});
    expect(anonymous.status).toBe(401);
    // Only the host's check is configured: the hint speaks of signing in, not of a token.
    expect(anonymous.body.message).toBe("The admin API needs an operator: sign in to this site as an operator (the host's admin.authorize decides)");
    // A Bearer token with no `admin.token` configured is credentials the check did not accept.
    expect((await revokeGrants(host, { authorization: `Bearer ${TOKEN}` })).status).toBe(403);
    const failed = await revokeGrants(host, { [OPERATOR]: 'throw' });
    expect(failed.status).toBe(500);
    expect(failed.body.code).toBe(1);
    expect(JSON.stringify(failed.body)).not.toContain('session store down');
  });

  it('with a token and the host\'s check, the 401 names both ways in', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN, authorize: operatorCheck } } });
    const none = await revokeGrants(host, {});
    expect(none.status).toBe(401);
    expect(none.body.message).toBe(
      "The admin API needs an operator: sign in to this site as an operator (the host's admin.authorize decides), or send `Authorization: Bearer <admin token>`",
    );
  });

  it('a 400 names the missing parameter; unknown admin paths are 404 in the envelope', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const bad = await revokeGrants(host, { authorization: `Bearer ${TOKEN}` }, `client_id=${CONFIDENTIAL.id}`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/sub/);
    const unknown = await host.http().get('/admin/nothing-here').set({ authorization: `Bearer ${TOKEN}` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe(1);
  });

  it('is off unless configured: /admin belongs to the host', async () => {
    const host = await startHost(adapter);
    const res = await revokeGrants(host, { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(404);
    expect(res.body?.code).toBeUndefined();
  });
});
