/**
 * A single-page app on another origin signs a user in with a public client, in Chromium
 * (docs/oauth.md#browser-apps-on-another-origin): its page reads discovery, exchanges the code with
 * PKCE, refreshes, and calls userinfo with the Bearer token, which Chromium preflights. The same
 * page cannot send a client secret in an Authorization header to the token endpoint: Chromium
 * refuses the request before it leaves.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeHosts, pkcePair, PUBLIC, startHost, type TestHost } from '../oauth/compliance/helpers.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { serve, type Served } from '../support/net.js';

const describeBrowser = describeWithChromium();

describeBrowser('a browser app on another origin, in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser | undefined;
  let host: TestHost;
  let app: Served;

  beforeAll(async () => {
    host = await startHost('express');
    // The app's origin: another port on another host name, so every call to the platform is cross-origin.
    app = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>spa</title>'));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await closeHosts();
  });

  it('reads discovery, exchanges the code, refreshes and reads userinfo; a client secret never leaves the page', async () => {
    const { verifier, challenge } = pkcePair();
    const callback = await host.code({ client_id: PUBLIC.id, redirect_uri: PUBLIC.redirectUri, scope: 'openid profile offline_access', code_challenge: challenge, code_challenge_method: 'S256' });
    const page = await browser!.newPage();
    await page.goto(app.url.replace('127.0.0.1', 'localhost'));
    const platform = host.origin;
    const result = await page.evaluate(
      async ({ platform, code, verifier, client, redirectUri }) => {
        const form = (fields: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams(fields) });
        const discovery = (await (await fetch(`${platform}/oauth/.well-known/openid-configuration`)).json()) as { issuer: string; token_endpoint: string; userinfo_endpoint: string };
        const tokens = (await (await fetch(discovery.token_endpoint, form({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client }))).json()) as { refresh_token: string };
        const refreshed = (await (await fetch(discovery.token_endpoint, form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client }))).json()) as { access_token?: string };
        const userinfo = await fetch(discovery.userinfo_endpoint, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
        const clientCredentials = (headers: Record<string, string>) => fetch(discovery.token_endpoint, { method: 'POST', headers, body: new URLSearchParams({ grant_type: 'client_credentials' }) });
        // The same request without the header reaches the platform (a 401): only the header stops the one with it.
        const withoutSecret = (await clientCredentials({})).status;
        let secretSent = 'sent';
        try {
          await clientCredentials({ authorization: `Basic ${btoa('web-client:a-secret')}` });
        } catch {
          secretSent = 'refused by the browser';
        }
        return { origin: (globalThis as unknown as { location: { origin: string } }).location.origin, issuer: discovery.issuer, refreshed: typeof refreshed.access_token, userinfo: { status: userinfo.status, body: await userinfo.json() }, withoutSecret, secretSent };
      },
      { platform, code: callback.get('code')!, verifier, client: PUBLIC.id, redirectUri: PUBLIC.redirectUri },
    );
    expect(result.origin).not.toBe(platform);
    expect(result.issuer).toBe(`${platform}/oauth`);
    expect(result.refreshed).toBe('string');
    expect(result.userinfo).toMatchObject({ status: 200, body: { sub: expect.any(String) } });
    expect(result.withoutSecret).toBe(401);
    expect(result.secretSent).toBe('refused by the browser');
    await page.close();
  });
});
