/** The example turns the admin API on with ADMIN_TOKEN (docs/example.md), and keeps it off without. */
import { afterEach, expect, it } from 'vitest';
import { startExample, type RunningExample } from './support.js';

const TOKEN = 'example-admin-token-0123456789abcdef';
let running: RunningExample | undefined;
afterEach(async () => {
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

it('without ADMIN_TOKEN there is no admin API', async () => {
  running = await startExample();
  expect((await fetch(`${running.base}/admin/clients`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
});
