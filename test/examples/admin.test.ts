/** The example turns the admin API on with ADMIN_TOKEN (docs/example.md), and keeps it off without. */
import { afterEach, expect, it, vi } from 'vitest';
import { startExample, type RunningExample } from './support.js';

const TOKEN = 'example-admin-token-0123456789abcdef';
let running: RunningExample | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await running?.close();
  running = undefined;
});

it('with ADMIN_TOKEN: the operator lists the demo client, registers one, and reads the metrics', async () => {
  running = await startExample({ ADMIN_TOKEN: TOKEN });
  const auth = { authorization: `Bearer ${TOKEN}` };
  expect((await fetch(`${running.base}/admin/clients`)).status).toBe(401);
  const list = (await (await fetch(`${running.base}/admin/clients`, { headers: auth })).json()) as { data: { id: string; source: string }[] };
  expect(list.data).toContainEqual(expect.objectContaining({ id: 'demo-client', source: 'options' }));
  const registered = await fetch(`${running.base}/admin/clients`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Partner', redirectUris: ['https://partner.example/cb'] }),
  });
  expect(registered.status).toBe(201);
  const metrics = await fetch(`${running.base}/admin/metrics`, { headers: auth });
  expect(await metrics.text()).toContain('courier_platform_guarded_calls_total');
});

it('shows each admin change on the console as an audit line, without the secret (docs/operator.md#the-audit-lines)', async () => {
  running = await startExample({ ADMIN_TOKEN: TOKEN });
  const info = vi.spyOn(console, 'info').mockImplementation(() => {});
  const registered = await fetch(`${running.base}/admin/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Partner', redirectUris: ['https://partner.example/cb'] }),
  });
  const { client, client_secret: secret } = ((await registered.json()) as { data: { client: { id: string }; client_secret: string } }).data;
  const lines = info.mock.calls.map((args) => String(args[0])).filter((line) => line.includes('admin: client changed'));
  expect(lines).toEqual([`[courier-platform] admin: client changed {"clientId":"${client.id}","change":"registered"}`]);
  expect(lines.join('\n')).not.toContain(secret);
});

it('without ADMIN_TOKEN there is no admin API', async () => {
  running = await startExample();
  expect((await fetch(`${running.base}/admin/clients`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
});
