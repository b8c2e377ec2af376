/**
 * The operator console with more applications than one page of `GET {admin}/clients`
 * (docs/operator.md#console), in Chromium on the running example: the applications screen shows
 * them 50 at a time until the last, which the operator suspends; the overview sums every page,
 * and past 1,000 applications says what it left out. No screen has more than six history
 * requests open at once. An application with more endpoints than one page of `GET {admin}/usage`
 * shows 100 at a time, on its card and on its page. The history route, and the usage of that
 * application, are answered by the test, in the shapes docs/operator.md gives.
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithChromium, launchChromium, unexpected } from '../support/chromium.js';
import { startExample, type RunningExample } from '../support/example.js';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const TOKEN = 'console-pages-token-0123456789abcdef0123456789';
const REGISTERED = 105;
const describeBrowser = describeWithChromium();

/** A page of 50 cards makes 100 requests, six at a time: seconds on a busy machine. */
const SETTLED = { timeout: 30_000 };

interface Listed {
  id: string;
  name: string;
  status: string;
}

describeBrowser('the operator console over many applications', { timeout: 120_000 }, () => {
  let example: RunningExample | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let all: Listed[] = [];
  const requests: string[] = [];
  const errors: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${example!.base}/admin/${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as { data: any; next_cursor?: string | null };
  };

  /**
   * Answers the history route: `calls` for the applications it names, nothing for the others,
   * each answer a little late so that requests overlap; tells which were asked and how many were
   * open at most.
   */
  async function answerHistory(calls: Record<string, number>) {
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const seen = { asked: [] as string[], open: 0, most: 0 };
    await page.route('**/admin/usage/history?*', async (route: Route) => {
      const asked = new URL(route.request().url()).searchParams;
      const clientId = asked.get('client_id')!;
      seen.asked.push(clientId);
      seen.most = Math.max(seen.most, ++seen.open);
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.open--;
      const admitted = calls[clientId];
      const series = admitted ? [{ api_path: '/openapi/v1/ping', points: [{ at: new Date(hour).toISOString(), admitted, rejected: 1 }] }] : [];
      await route.fulfill({ contentType: 'application/json', body: JSON.stringify({ code: 0, message: 'ok', data: { client_id: clientId, step: asked.get('step'), series, other: null } }) });
    });
    return seen;
  }

  const shownCount = () => page.locator('p[role=status]', { hasText: /shown/ }).textContent();

  beforeAll(async () => {
    [example, browser] = await Promise.all([startExample({ env: { ADMIN_TOKEN: TOKEN } }), launchChromium()]);
    for (let i = 1; i <= REGISTERED; i++) {
      await api('POST', 'clients', { name: `Bulk app ${String(i).padStart(3, '0')}`, redirectUris: ['https://bulk.example/callback'], public: true });
    }
    all = (await api('GET', 'clients?limit=500')).data as Listed[];
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(15_000);
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (unexpected(m, example!.base)) errors.push(`${m.type()}: ${m.text()} (${m.location().url})`);
    });
    page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
    await page.goto(`${example.base}/admin/console#/apps`);
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.getByLabel('Admin token').press('Enter');
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await example?.stop();
  }, 30_000);

  it('shows the applications 50 at a time until the last, which the operator suspends', async () => {
    // The configured demo client sorts after the registered ones: the last of those is the one to reach.
    expect(all).toHaveLength(REGISTERED + 1);
    const last = all.filter((client) => client.id.startsWith('app_')).at(-1)!;
    const seen = await answerHistory({});
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
    await expect.poll(shownCount, SETTLED).toBe('50 applications shown, and more.');
    expect(await page.getByRole('article').count()).toBe(50);
    expect(await page.getByRole('article', { name: last.name }).count()).toBe(0);
    const more = page.getByRole('button', { name: 'Show more applications' });
    // The end of the first page, where the control for the next one is.
    await mkdir(ARTIFACTS, { recursive: true });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await more.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${ARTIFACTS}console-applications-paged-${width}.png` });
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    await more.click();
    await expect.poll(shownCount, SETTLED).toBe('100 applications shown, and more.');
    // The keyboard is taken to the first of the new cards.
    expect(await page.evaluate('document.activeElement?.textContent')).toBe(all[50]!.name);
    await more.click();
    await expect.poll(shownCount, SETTLED).toBe(`${REGISTERED + 1} applications shown.`);
    expect(await more.isHidden()).toBe(true);
    expect(await page.getByRole('article').count()).toBe(REGISTERED + 1);
    expect(seen.most).toBeGreaterThan(1);
    expect(seen.most).toBeLessThanOrEqual(6);

    await page.getByRole('link', { name: last.name }).click();
    await page.getByRole('heading', { level: 1, name: last.name }).waitFor();
    await page.getByRole('button', { name: 'Suspend' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await api('GET', `clients/${last.id}`)).data.status).toBe('suspended');

    await page.getByRole('link', { name: '← Applications' }).click();
    await expect.poll(shownCount, SETTLED).toBe('50 applications shown, and more.');
    await page.getByLabel('Status', { exact: true }).selectOption('suspended');
    await expect.poll(shownCount, SETTLED).toBe('1 application shown.');
    const card = page.getByRole('article');
    expect(await card.count()).toBe(1);
    expect(await card.getByRole('heading').textContent()).toBe(last.name);
    expect(await card.getByText('suspended', { exact: true }).isVisible()).toBe(true);
    await page.unroute('**/admin/usage/history?*');
  });

  it('sums the overview over every page of applications and ranks the last one first', async () => {
    const last = all.at(-1)!;
    const seen = await answerHistory({ [last.id]: 70, [all[0]!.id]: 20 });
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('.chart canvas').first().waitFor();
    expect(await page.getByText(`Summed over all ${REGISTERED + 1} applications.`).isVisible()).toBe(true);
    expect(await page.getByText('90 calls admitted, 2 refused (429)').isVisible()).toBe(true);
    const rows = page.locator('.panel', { hasText: 'Top applications' }).getByRole('row');
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(1).innerText()).toMatch(new RegExp(`^${last.name}\\s+70\\s+1$`));
    expect(new Set(seen.asked)).toEqual(new Set(all.map((client) => client.id)));
    expect(seen.most).toBeLessThanOrEqual(6);
    await page.unroute('**/admin/usage/history?*');
  });

  it('shows an application it registers at once, wherever its id falls, and once only when its page comes', async () => {
    await answerHistory({});
    await page.getByRole('link', { name: 'Applications' }).click();
    await expect.poll(shownCount, SETTLED).toBe('50 applications shown, and more.');
    await page.getByText('Register an application').click();
    await page.getByLabel('Name').fill('Registered among many');
    await page.getByLabel('Redirect URIs, one a line').fill('https://many.example/callback');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.locator('.secret-value').waitFor();
    const card = page.getByRole('article', { name: 'Registered among many' });
    await card.waitFor();
    const more = page.getByRole('button', { name: 'Show more applications' });
    const loading = page.getByRole('button', { name: 'Show more applications', disabled: true });
    while (await more.isVisible()) {
      await more.click();
      await expect.poll(() => loading.count(), SETTLED).toBe(0);
    }
    await expect.poll(shownCount, SETTLED).toBe(`${REGISTERED + 2} applications shown.`);
    expect(await page.getByRole('article').count()).toBe(REGISTERED + 2);
    expect(await card.count()).toBe(1);
    await page.unroute('**/admin/usage/history?*');
  });

  it('past 1,000 applications, sums the first 1,000 and says that it left the others out', async () => {
    const fake = Array.from({ length: 1200 }, (_, i) => ({ id: `app_${String(i).padStart(5, '0')}`, name: `Fleet app ${i}`, status: 'active', source: 'store' }));
    const pages: { limit: number; cursor: string | null }[] = [];
    await page.route('**/admin/clients?*', (route) => {
      const asked = new URL(route.request().url()).searchParams;
      const limit = Number(asked.get('limit'));
      const from = Number(asked.get('cursor') ?? 0);
      pages.push({ limit, cursor: asked.get('cursor') });
      const data = fake.slice(from, from + limit);
      const next = from + limit < fake.length ? String(from + limit) : null;
      return route.fulfill({ contentType: 'application/json', body: JSON.stringify({ code: 0, message: 'ok', data, next_cursor: next }) });
    });
    const seen = await answerHistory({ [fake[999]!.id]: 5, [fake[1000]!.id]: 500 });
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // 1,000 histories, six at a time: like a page of cards, seconds on a busy machine.
    await page.locator('.chart canvas').first().waitFor({ timeout: 60_000 });
    expect(await page.getByText('Summed over the first 1,000 applications in id order, and the busiest of those: there are more').isVisible()).toBe(true);
    expect(await page.getByText('5 calls admitted, 1 refused (429)').isVisible()).toBe(true);
    expect(pages).toEqual([{ limit: 500, cursor: null }, { limit: 500, cursor: '500' }]);
    expect(seen.asked).toHaveLength(1000);
    expect(seen.asked).not.toContain(fake[1000]!.id);
    expect(seen.most).toBeLessThanOrEqual(6);
    await page.unrouteAll();
  });

  it('shows an application of many endpoints 100 at a time, on its card and on its page, until the last', async () => {
    const busy = all[0]!;
    const reset = new Date(Date.now() + 60_000).toISOString();
    const endpoints = Array.from({ length: 250 }, (_, i) => ({
      api_path: `/openapi/v1/made-up/${String(i).padStart(3, '0')}`,
      scope: 'system',
      cost: 1,
      periods: ['minute', 'day', 'month'].map((period) => ({ period, limit: 100, used: 1, remaining: 99, unlimited: false, reset_at: reset })),
    }));
    const asked: (string | null)[][] = [];
    // GET {admin}/usage of this application, paged as docs/operator.md#usage says; the others' go to the example.
    await page.route(
      (url) => url.pathname.endsWith('/admin/usage') && url.searchParams.get('client_id') === busy.id,
      (route) => {
        const query = new URL(route.request().url()).searchParams;
        asked.push([query.get('limit'), query.get('cursor')]);
        const from = Number(query.get('cursor') ?? 0);
        const next = from + 100 < endpoints.length ? String(from + 100) : null;
        const data = { client_id: busy.id, endpoints: endpoints.slice(from, from + 100) };
        return route.fulfill({ contentType: 'application/json', body: JSON.stringify({ code: 0, message: 'ok', data, next_cursor: next }) });
      },
    );
    const more = page.getByRole('button', { name: 'Show more endpoints' });
    const paths = (where: Locator) => where.locator('.endpoints code').allTextContents();
    const pathsOf = (from: number, to: number) => endpoints.slice(from, to).map((endpoint) => endpoint.api_path);

    await page.getByRole('link', { name: 'Applications' }).click();
    const card = page.getByRole('article', { name: busy.name });
    await expect.poll(() => paths(card), SETTLED).toEqual(pathsOf(0, 100));
    expect(await card.getByText('100 endpoints listed, and more.').isVisible()).toBe(true);
    // Only this card has more than a page, and its button names it.
    expect(await more.count()).toBe(1);
    expect(await more.getAttribute('aria-label')).toBe(`Show more endpoints of ${busy.name}`);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await more.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${ARTIFACTS}console-endpoints-paged-${width}.png` });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await more.click();
    await expect.poll(() => paths(card), SETTLED).toEqual(pathsOf(0, 200));
    // The keyboard goes on from the first endpoint added.
    expect(await page.evaluate('document.activeElement?.querySelector("code")?.textContent')).toBe(endpoints[100]!.api_path);
    await more.click();
    await expect.poll(() => paths(card), SETTLED).toEqual(pathsOf(0, 250));
    expect(await card.getByText('250 endpoints listed.').isVisible()).toBe(true);
    expect(await more.count()).toBe(0);
    expect(asked).toEqual([[null, null], [null, '100'], [null, '200']]);

    await card.getByRole('link', { name: busy.name }).click();
    await page.getByRole('heading', { level: 1, name: busy.name }).waitFor();
    const current = page.locator('section', { has: page.getByRole('heading', { name: 'Current periods' }) });
    await expect.poll(() => paths(current), SETTLED).toEqual(pathsOf(0, 100));
    await more.click();
    await expect.poll(() => paths(current), SETTLED).toEqual(pathsOf(0, 200));
    expect(await current.getByText('200 endpoints listed, and more.').isVisible()).toBe(true);
    await page.unrouteAll();
  });

  it('made no request to another origin and logged no error', () => {
    const origin = new URL(example!.base).origin;
    expect(requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
