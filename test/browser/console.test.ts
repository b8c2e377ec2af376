/**
 * The operator console in a real browser (docs/operator.md#console): Chromium (the Debian
 * package, CHROMIUM_PATH in CI) driven by playwright-core on the running example with
 * ADMIN_TOKEN set. The operator signs in with the token, sees the applications with their bars,
 * registers one, opens it, sees its usage chart, rotates and copies its secret, suspends and
 * resumes it, ends a user's grants, edits a stored rule and deletes the application. Every
 * request the page makes stays on the example's origin, and the page logs no error. Screenshots
 * at 1280 and 390 px wide are saved in test/artifacts/ (ignored by git).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithChromium, launchChromium, unexpected } from '../support/chromium.js';
import { startExample, type RunningExample } from '../support/example.js';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const TOKEN = 'console-test-token-0123456789abcdef0123456789';
const QUOTA_MINUTE = 5;
const describeBrowser = describeWithChromium();

describeBrowser('the operator console in Chromium on the running example', { timeout: 120_000 }, () => {
  let example: RunningExample | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const errors: string[] = [];

  const api = async (method: string, path: string) => {
    const res = await fetch(`${example!.base}/admin/${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as { data: any } };
  };

  /** Calls of the guarded /openapi/v1/ping as the demo client, some of them past its minute limit. */
  async function someCalls(count: number): Promise<number[]> {
    const base = example!.base;
    // The minute's count is read back on the page: start early in a minute, so it is still the same one.
    const second = new Date().getUTCSeconds();
    if (second > 40) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    const tokenRes = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const { access_token: accessToken } = (await tokenRes.json()) as { access_token: string };
    const statuses = [];
    for (let i = 0; i < count; i++) statuses.push((await fetch(`${base}/openapi/v1/ping`, { headers: { authorization: `Bearer ${accessToken}` } })).status);
    return statuses;
  }

  /** A property of the element that has the focus (the page's code runs in the browser, as text). */
  const focused = (property: 'id' | 'tagName' | 'textContent') => page.evaluate<string | undefined>(`document.activeElement?.${property}`);

  async function screenshot(name: string, width: number): Promise<void> {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150); // the chart follows its box's new width
    await page.screenshot({ path: `${ARTIFACTS}console-${name}-${width}.png`, fullPage: true });
  }

  beforeAll(async () => {
    [example, browser] = await Promise.all([
      startExample({ env: { ADMIN_TOKEN: TOKEN, QUOTA_MINUTE: String(QUOTA_MINUTE) } }),
      launchChromium(),
    ]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: example.base });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (unexpected(m, example!.base)) errors.push(`${m.type()}: ${m.text()} (${m.location().url})`);
    });
    page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
    await mkdir(ARTIFACTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await example?.stop();
  }, 30_000);

  it('the start banner names the console', () => {
    expect(example!.output()).toContain(`${example!.base}/admin/console`);
  });

  it('asks for the admin token, keeps it for the tab only, and shows the applications with their bars', async () => {
    const statuses = await someCalls(QUOTA_MINUTE + 2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);

    await page.goto(`${example!.base}/admin/console`);
    const field = page.getByLabel('Admin token');
    await expect.poll(() => field.isVisible()).toBe(true);
    expect(await field.getAttribute('type')).toBe('password');

    await field.fill('not-the-token-0123456789abcdef0123456789');
    await field.press('Enter');
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'refused this token' }).isVisible()).toBe(true);

    await field.fill(TOKEN);
    await field.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await page.evaluate('({ session: Object.keys(sessionStorage), local: localStorage.length, cookie: document.cookie })')).toEqual({
      session: ['courier-platform.admin-token'],
      local: 0,
      cookie: '',
    });
    await screenshot('overview', 1280);

    // Keyboard: the skip link comes first and leads to the content, keeping the screen.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The heading comes at once, the overview's controls once it has read the applications.
    await page.getByRole('group', { name: 'Steps' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await focused('textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('[document.activeElement?.id, location.hash]')).toEqual(['main', '']);
    await page.keyboard.press('Tab');
    expect(await focused('tagName')).toBe('BUTTON');

    await page.getByRole('link', { name: 'Applications' }).click();
    const demo = page.getByRole('article', { name: 'Demo relying party' });
    await demo.waitFor();
    expect(await demo.getByText('active', { exact: true }).isVisible()).toBe(true);
    expect(await demo.getByText('/openapi/v1/ping').isVisible()).toBe(true);
    const minute = demo.getByRole('meter', { name: /^minute:/ });
    expect(await minute.getAttribute('aria-valuenow')).toBe(String(QUOTA_MINUTE));
    expect(await minute.getAttribute('aria-valuemax')).toBe(String(QUOTA_MINUTE));
    expect(await demo.getByRole('meter', { name: /^day:/ }).getAttribute('aria-valuenow')).toBe(String(QUOTA_MINUTE));
    expect(await demo.getByText(/resets /).count()).toBe(3);
    await screenshot('applications', 1280);
    await screenshot('applications', 390);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  let clientId = '';

  it('registers an application and shows its secret once, with a copy button', async () => {
    await page.getByText('Register an application').click();
    await page.getByLabel('Name').fill('Console test <b>app</b>');
    await page.getByLabel('Redirect URIs, one a line').fill('https://shop.example/callback');
    await page.getByRole('button', { name: 'Register' }).click();
    const secret = page.locator('.secret-value');
    await secret.waitFor();
    const shown = (await secret.textContent())!;
    expect(shown).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(shown);

    // A name with markup is text, never HTML.
    const card = page.getByRole('article', { name: 'Console test <b>app</b>' });
    await card.waitFor();
    expect(await page.locator('article b').count()).toBe(0);
    clientId = (await card.locator('code').first().textContent())!;
    expect(clientId).toMatch(/^app_/);
  });

  it('opens the application: its chart, a rotated secret copied, suspended and resumed, a user\'s grants ended', async () => {
    await page.getByRole('link', { name: 'Console test <b>app</b>' }).click();
    await page.getByRole('heading', { level: 1, name: 'Console test <b>app</b>' }).waitFor();
    // The usage chart, or "No history" while the admin API has no history route.
    const history = await api('GET', `usage/history?client_id=${clientId}&step=hour`);
    if (history.status === 404) await page.getByText('No history.').first().waitFor();
    else await page.locator('.chart canvas').first().waitFor();

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = page.locator('.secret-value');
    await secret.waitFor();
    const rotated = (await secret.textContent())!;
    expect(await page.getByText(/The previous secret works until/).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(rotated);
    expect((await api('GET', `clients/${clientId}`)).body.data.previous_valid_until).toBeDefined();
    await screenshot('application', 1280);
    await screenshot('application', 390);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Suspend' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await api('GET', `clients/${clientId}`)).body.data.status).toBe('suspended');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Suspend' }).waitFor();
    expect((await api('GET', `clients/${clientId}`)).body.data.status).toBe('active');

    await page.getByLabel('User (sub)').fill('demo');
    await page.getByRole('button', { name: "End the user's grants" }).click();
    await page.getByText('The grants of demo at this application ended').waitFor();
  });

  it('draws the usage charts, of the application and of the overview, from the history the admin API answers', async () => {
    // GET {admin}/usage/history in the shape docs/operator.md#usage-history gives, answered for this page only.
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    await page.route('**/admin/usage/history?*', (route) => {
      const asked = new URL(route.request().url()).searchParams;
      const mine = asked.get('client_id') === clientId;
      return route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({
          code: 0,
          message: 'ok',
          data: {
            client_id: asked.get('client_id'),
            step: asked.get('step'),
            series: !mine ? [] : [
              { api_path: '/openapi/v1/ping', points: [{ at: new Date(hour - 3_600_000).toISOString(), admitted: 40, rejected: 3 }, { at: new Date(hour).toISOString(), admitted: 12, rejected: 0 }] },
              { api_path: '/openapi/v1/orders', points: [{ at: new Date(hour).toISOString(), admitted: 8, rejected: 1 }] },
            ],
            // The endpoints past the answer's 100 busiest, summed: the chart counts them too.
            other: !mine ? null : { endpoints: 150, points: [{ at: new Date(hour).toISOString(), admitted: 5, rejected: 2 }] },
          },
        }),
      });
    });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Console test <b>app</b>' }).waitFor();
    await page.locator('.chart canvas').first().waitFor();
    expect(await page.getByText('65 calls admitted, 6 refused (429)').isVisible()).toBe(true);
    await screenshot('chart', 1280);

    // The overview sums every application's history and ranks them.
    await page.getByRole('link', { name: 'Overview' }).click();
    // The application's page showed the same total and a chart: wait for what only the overview draws.
    const rows = page.locator('.panel', { hasText: 'Top applications' }).getByRole('row');
    await rows.nth(1).waitFor();
    await page.locator('.chart canvas').first().waitFor();
    expect(await page.getByText('65 calls admitted, 6 refused (429)').isVisible()).toBe(true);
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).innerText()).toMatch(/^Console test <b>app<\/b>\s+65\s+6$/);
    await screenshot('overview-chart', 1280);
    await screenshot('overview-chart', 390);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.unroute('**/admin/usage/history?*');
  });

  it('edits a stored rule', async () => {
    await page.getByRole('link', { name: 'Rules' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rules' }).waitFor();
    await page.getByLabel('Scope', { exact: true }).selectOption('client');
    await page.getByLabel('Client id (client scope)').fill(clientId);
    await page.getByLabel('API path').fill('/openapi/v1/ping');
    await page.getByLabel('Per minute').fill('100');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('button', { name: 'Edit the rule of /openapi/v1/ping' }).waitFor();

    await page.getByRole('button', { name: 'Edit the rule of /openapi/v1/ping' }).click();
    expect(await focused('id')).toBe('rule-minute');
    await page.getByLabel('Per minute').fill('250');
    await page.getByLabel('Per day').fill('9000');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('cell', { name: '9,000' }).waitFor();
    const rules = (await api('GET', 'rules')).body.data as { clientId?: string; minute?: number; day?: number }[];
    expect(rules.filter((rule) => rule.clientId === clientId)).toEqual([expect.objectContaining({ minute: 250, day: 9000, source: 'store' })]);
    await screenshot('rules', 1280);
    await screenshot('rules', 390);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Delete the rule of /openapi/v1/ping' }).click();
    await page.getByText('None yet.').waitFor();
    expect(((await api('GET', 'rules')).body.data as { clientId?: string }[]).filter((rule) => rule.clientId === clientId)).toEqual([]);
  });

  it('deletes the application after a confirmation', async () => {
    await page.goto(`${example!.base}/admin/console#/apps/${encodeURIComponent(clientId)}`);
    await page.getByRole('button', { name: 'Delete…' }).click();
    expect(await focused('textContent')).toBe('Delete for good');
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await api('GET', `clients/${clientId}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
    expect((await api('GET', `clients/${clientId}`)).status).toBe(404);
  });

  it('an address naming no application says so, for a garbled escape and a dot segment too', async () => {
    for (const [hash, id] of [['%E0%A4%A', '%E0%A4%A'], ['.', '.'], [encodeURIComponent(clientId), clientId]]) {
      await page.goto(`${example!.base}/admin/console#/apps/${hash}`);
      await page.getByRole('alert').getByText(`No client ${JSON.stringify(id)}`).waitFor();
    }
  });

  it('made no request to another origin and logged no error', () => {
    const origin = new URL(example!.base).origin;
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
