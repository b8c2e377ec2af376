/**
 * Admin writes refuse what another site's page can send (docs/operator.md#cross-site-requests),
 * through HTTP on every adapter. The operator here is known by a session cookie
 * (`admin.authorize`), which a browser attaches to any site's form: the probe is the secret
 * rotation, whose effect shows in the client's `previousSecretValidUntil`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, closeHosts, startHost, type TestHost } from '../oauth/compliance/helpers.js';
import { rawHeader } from '../support/raw-header.js';

afterEach(closeHosts);

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const COOKIE = 'staff_session=operator';
const ATTACKER = 'https://attacker.example';
const CONSOLE = 'https://ops.example.com';

/** The host's check reads its session cookie from whatever its host hands over. */
function cookieOperator(raw: unknown): boolean | null {
  const cookie = rawHeader(raw, 'cookie');
  return cookie === undefined ? null : cookie === COOKIE;
}

async function adminHost(adapter: (typeof ADAPTER_NAMES)[number], admin: Record<string, unknown> = {}, publicUrl?: string): Promise<TestHost> {
  return startHost(adapter, {
    platform: { admin: { token: TOKEN, authorize: cookieOperator, ...admin } },
    ...(publicUrl ? { oauth: { publicUrl } } : {}),
  });
}

/** A confidential client registered by a machine with the token; answers its id. */
async function registered(host: TestHost): Promise<string> {
  const res = await host
    .http()
    .post('/admin/clients')
    .set({ authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' })
    .send(JSON.stringify({ name: 'Shop', redirectUris: ['https://shop.example/cb'] }));
  expect(res.status, res.text).toBe(201);
  return res.body.data.client.id as string;
}

async function rotated(host: TestHost, id: string): Promise<boolean> {
  const res = await host.http().get(`/admin/clients/${id}`).set({ authorization: `Bearer ${TOKEN}` });
  expect(res.status).toBe(200);
  return res.body.data.previousSecretValidUntil !== undefined;
}

/** What a browser sends with a form another site's page submits. */
const crossSiteForm = { cookie: COOKIE, origin: ATTACKER, 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' };

describe.each(ADAPTER_NAMES)('admin writes from other sites on %s', (adapter) => {
  it("refuses another site's form post to rotate a secret with 403 in the envelope, whatever the browser tells", async () => {
    const host = await adminHost(adapter);
    const id = await registered(host);
    const variants: Record<string, string>[] = [
      crossSiteForm,
      // Fetch Metadata alone (Origin withheld), and a sibling subdomain.
      { cookie: COOKIE, 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' },
      { cookie: COOKIE, 'sec-fetch-site': 'same-site', 'content-type': 'application/json' },
      // Header values compare without regard to case, and a value the check does not know is not this site's.
      { cookie: COOKIE, 'sec-fetch-site': 'Cross-Site', 'content-type': 'application/json' },
      { cookie: COOKIE, 'sec-fetch-site': 'elsewhere', 'content-type': 'application/json' },
      // Origin alone, an opaque one (a sandboxed frame), and one that only starts like this host.
      { cookie: COOKIE, origin: ATTACKER },
      { cookie: COOKIE, origin: 'null' },
      { cookie: COOKIE, origin: `${host.origin}.attacker.example` },
      // RFC 6454 7.1: an origin has no userinfo; the URL parser would drop `attacker@` and see this host.
      { cookie: COOKIE, origin: host.origin.replace('://', '://attacker@') },
    ];
    for (const headers of variants) {
      const res = await host.http().post(`/admin/clients/${id}/secret`).set(headers).send(headers['content-type'] ? 'x=1' : undefined);
      expect([JSON.stringify(headers), res.status], res.text).toEqual([JSON.stringify(headers), 403]);
      expect(res.body).toMatchObject({ code: 1, data: null });
      expect(res.body.message).toMatch(/from other sites' pages.*admin\.allowedOrigins/);
    }
    // Every write method, the Bearer token included: the browser's word decides.
    const writes = [
      host.http().patch(`/admin/clients/${id}`).set({ 'content-type': 'application/json' }).send('{"status":"suspended"}'),
      host.http().delete(`/admin/clients/${id}`),
      host.http().delete(`/admin/grants?client_id=${id}&sub=alice`),
    ];
    for (const write of writes) expect((await write.set({ ...crossSiteForm, authorization: `Bearer ${TOKEN}` })).status).toBe(403);
    expect(await rotated(host, id)).toBe(false);
    expect((await host.http().get(`/admin/clients/${id}`).set({ authorization: `Bearer ${TOKEN}` })).body.data.status).toBe('active');
  });

  it('refuses a write whose body is not JSON with 415, even when the browser names no site', async () => {
    const host = await adminHost(adapter);
    const id = await registered(host);
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
      const res = await host.http().post(`/admin/clients/${id}/secret`).set({ cookie: COOKIE, 'content-type': type }).send('a=1');
      expect([type, res.status]).toEqual([type, 415]);
      expect(res.body.message).toMatch(/application\/json/);
    }
    expect(await rotated(host, id)).toBe(false);
  });

  it("admits this site's own pages, machines with the token, and reads from anywhere", async () => {
    const host = await adminHost(adapter);
    const id = await registered(host);
    // The operator's browser on this site: Origin is the site's own, the body JSON.
    const own = await host
      .http()
      .patch(`/admin/clients/${id}`)
      .set({ cookie: COOKIE, origin: host.origin, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' })
      .send('{"name":"Shop 2"}');
    expect(own.status, own.text).toBe(200);
    // A machine: the token, no Origin, no body.
    const machine = await host.http().post(`/admin/clients/${id}/secret`).set({ authorization: `Bearer ${TOKEN}` });
    expect(machine.status, machine.text).toBe(200);
    expect(machine.body.data.client_secret).toEqual(expect.any(String));
    // A URL typed in the address bar says `none`.
    const typed = await host.http().delete(`/admin/grants?client_id=${id}&sub=alice`).set({ cookie: COOKIE, 'sec-fetch-site': 'none' });
    expect(typed.status).toBe(200);
    // Reads are not refused: another site's page cannot read the answer (no CORS).
    const read = await host.http().get(`/admin/clients/${id}`).set({ cookie: COOKIE, origin: ATTACKER, 'sec-fetch-site': 'cross-site' });
    expect(read.status).toBe(200);
  });

  it('admits the origins in admin.allowedOrigins, and judges by oauth.publicUrl when it is set', async () => {
    const host = await adminHost(adapter, { allowedOrigins: [CONSOLE] }, 'https://platform.example');
    const id = await registered(host);
    // force=true: each admitted rotation follows the one before within its overlap.
    const rotate = (headers: Record<string, string>) => host.http().post(`/admin/clients/${id}/secret?force=true`).set({ cookie: COOKIE, ...headers });
    expect((await rotate({ origin: CONSOLE, 'sec-fetch-site': 'same-site' })).status).toBe(200);
    expect((await rotate({ origin: 'https://platform.example', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    // Behind the public URL, the Host the platform sees is not what browsers use.
    expect((await rotate({ origin: host.origin })).status).toBe(403);
    expect((await rotate({ origin: ATTACKER, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  });
});
