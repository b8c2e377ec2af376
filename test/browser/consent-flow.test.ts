/**
 * A real browser on the running example: Chromium (the Debian package, CHROMIUM_PATH in CI)
 * driven by playwright-core opens the example's relying party, signs in as demo on the host's
 * login page (after a wrong password, which keeps the user name), approves on the platform's
 * consent page and lands on /callback, which shows the user's name, a curl for the quota-guarded
 * API and the quota left; and it reads the example's API reference page. Screenshots of the
 * consent, callback and API reference pages are saved in
 * test/artifacts/ (ignored by git). Without a Chromium binary the suite is skipped with a visible message, unless
 * REQUIRE_SERVICES=1 (CI), where that is a failure.
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { startExample, type RunningExample } from '../support/example.js';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const describeBrowser = describeWithChromium();

// ---------------------------------------------------------------------------------------------

const SCOPE_DESCRIPTIONS = [
  'Sign you in with your account',
  'See your name and basic profile',
  'See your email address',
  'Keep access while you are away (refresh tokens)',
];

describeBrowser('consent flow in Chromium on the running example', { timeout: 60_000 }, () => {
  let example: RunningExample | undefined;
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    [example, browser] = await Promise.all([
      startExample(),
      launchChromium(),
    ]);
    page = await browser.newPage({ viewport: { width: 900, height: 700 } });
    page.setDefaultTimeout(15_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await example?.stop();
  }, 30_000);

  it('signs in as demo, approves, and lands on /callback showing the user', async () => {
    const base = example!.base;
    const diagnostics = () => `\n--- example output ---\n${example!.output()}`;

    // The example's relying party builds the authorization URL (state, nonce, PKCE) and the
    // platform sends the signed-out browser to the host's login page.
    await page.goto(`${base}/rp/start`);
    const atLogin = new URL(page.url());
    expect(atLogin.origin + atLogin.pathname, diagnostics()).toBe(`${base}/login`);
    const returnTo = new URL(atLogin.searchParams.get('return_to')!, base);
    expect(returnTo.pathname).toBe('/oauth/authorize');
    expect(returnTo.searchParams.get('code_challenge_method')).toBe('S256');
    expect(returnTo.searchParams.get('state')).toBeTruthy();
    expect(returnTo.searchParams.get('nonce')).toBeTruthy();

    // A wrong password: the page says so and keeps the user name, so only the password is typed again.
    await page.fill('input[name="username"]', 'demo');
    await page.fill('input[name="password"]', 'not-the-password');
    const refused = page.waitForResponse((r: Response) => new URL(r.url()).pathname === '/login' && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect((await refused).status(), `the page says: ${await page.locator('body').innerText()}${diagnostics()}`).toBe(401);
    await page.waitForLoadState('load');
    expect(await page.getByRole('alert').textContent(), diagnostics()).toBe('Wrong user name or password.');
    expect(await page.inputValue('input[name="username"]')).toBe('demo');
    expect(await page.inputValue('input[name="password"]')).toBe('');

    await page.fill('input[name="password"]', 'demo');
    const consentResponse = page.waitForResponse((r: Response) => new URL(r.url()).pathname === '/oauth/authorize' && r.status() === 200);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const consent = await consentResponse;
    await page.waitForLoadState('load');

    // The consent page: who asks, for what, and for whom.
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    const heading = page.getByRole('heading', { level: 1 });
    expect(await heading.textContent()).toContain('Demo relying party');
    expect(await page.locator('h1 strong').textContent()).toBe('Demo relying party');
    for (const description of SCOPE_DESCRIPTIONS) {
      expect(await page.getByText(description, { exact: false }).isVisible(), `scope "${description}" is shown`).toBe(true);
    }
    expect(await page.getByText('Signed in as Demo User').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Approve' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Deny' }).isVisible()).toBe(true);

    // It cannot be framed (clickjacking), in either header a browser honours.
    const headers = await consent.allHeaders();
    expect(headers['content-security-policy']).toMatch(/(?:^|;)\s*frame-ancestors 'none'\s*(?:;|$)/);
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['cache-control']).toContain('no-store');

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}consent.png`, fullPage: true });

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.pathname === '/callback');
    await page.waitForLoadState('load');
    const landed = new URL(page.url());
    expect(landed.searchParams.get('code')).toBeTruthy();
    expect(landed.searchParams.get('iss')).toBe(`${base}/oauth`);
    const title = await page.locator('h1').first().textContent();
    expect(title, `the callback page says: ${(await page.locator('body').innerText()).slice(0, 500)}${diagnostics()}`).toBe('Signed in as Demo User');

    // How to call the quota-guarded API with the access token, ready to copy, and the quota left.
    const curl = (await page.locator('#curl').innerText()).trim();
    expect(curl).toMatch(new RegExp(`^curl -H 'Authorization: Bearer [^'\\s]+' '${base}/openapi/v1/ping'$`));
    expect(await page.getByRole('cell', { name: 'minute' }).isVisible()).toBe(true);
    expect(await page.getByText('60 of 60 left').isVisible()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}callback.png`, fullPage: true });
  });

  it('shows the API reference page: every part of the platform from its OpenAPI document, under its own CSP', async () => {
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${example!.base}/api-docs`);
    // Swagger UI renders one block per operation once it has read /openapi/v1/openapi.json.
    await page.locator('.opblock').first().waitFor();
    const text = await page.locator('#api-reference').innerText();
    for (const path of ['/courier/create_order', '/openapi/v1/get_quota', '/oauth/token', '/openapi/v1/ping']) expect(text).toContain(path);
    expect(problems, 'no script error or blocked resource').toEqual([]);
    await page.screenshot({ path: `${ARTIFACTS}api-reference.png`, fullPage: false });
  });
});
