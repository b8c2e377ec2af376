/**
 * The operator console's page and files (docs/operator.md#console), through HTTP on every adapter:
 * served without credentials but holding no data, under a Content-Security-Policy that admits
 * this origin only, its files named by their content's digest and cached for good, and nothing
 * else under its path.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, RequestListener } from 'node:http';
import { createRequire } from 'node:module';
import connect from 'connect';
import express from 'express';
import Koa from 'koa';
import mount from 'koa-mount';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { MAX_CLIENT_PAGE } from '../../src/admin/client-list.js';
import { ADAPTERS, type Adapter } from '../support/apps.js';
import { serve, type Served } from '../support/net.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const UPLOT_SCRIPT = readFileSync(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');

const running: Served[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((served) => served.close()));
});

async function host(adapter: Adapter, options: CourierPlatformOptions = {}): Promise<Served> {
  const served = await serve(adapter.build({ courier: false, admin: { token: TOKEN }, ...options }));
  running.push(served);
  return served;
}

/** The files the page names, relative to `/admin/console`. */
function filesOf(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)="([^"]+)"/g)].map((match) => match[1]!).filter((url) => !url.startsWith('data:'));
}

const absolute = (file: string) => `/admin/${file}`;

describe.each(ADAPTERS)('the operator console on $name', (adapter) => {
  it('serves the page without credentials, under a CSP that admits only this origin and no inline code', async () => {
    const served = await host(adapter);
    const res = await request(served.server).get('/admin/console');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CSP);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    // No inline script, style element or style attribute: the CSP would refuse them.
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.text).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    // Every file comes from this origin, under the console's own path.
    const files = filesOf(res.text);
    expect(files).toHaveLength(7);
    for (const file of files) expect(file).toMatch(/^console\/assets\/[a-z]+\.[0-9a-f]{16}\.(?:js|css)$/);
    expect(res.text).toContain('<label for="token">Admin token</label>');
    expect(res.text).toContain('type="password"');
  });

  it('gives no data without the operator check: the admin API behind the page still answers 401', async () => {
    const served = await host(adapter);
    const page = await request(served.server).get('/admin/console');
    expect(page.text).not.toContain(TOKEN);
    const metrics = await request(served.server).get('/admin/metrics');
    expect(metrics.status).toBe(401);
    expect(metrics.headers['www-authenticate']).toBe('Bearer realm="admin"');
  });

  it("serves the page's scripts and stylesheets, uPlot's from the package, cached by digest with an ETag", async () => {
    const served = await host(adapter);
    const files = filesOf((await request(served.server).get('/admin/console')).text);
    const types = [];
    for (const file of files) {
      const res = await request(served.server).get(absolute(file));
      expect(res.status, file).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const etag = res.headers.etag as string;
      expect(etag).toBe(`"${file.split('.')[1]}"`);
      types.push(res.headers['content-type']);
      if (file.startsWith('console/assets/uplot.') && file.endsWith('.js')) expect(res.text).toBe(UPLOT_SCRIPT);

      const again = await request(served.server).get(absolute(file)).set('if-none-match', `W/"other", ${etag}`);
      expect(again.status, file).toBe(304);
      expect(again.text ?? '').toBe('');
    }
    expect(types.sort()).toEqual([...Array(2).fill('text/css; charset=utf-8'), ...Array(5).fill('text/javascript; charset=utf-8')]);
  });

  it('answers 404 in the envelope for a file it does not have, a name without its digest, or a path outside', async () => {
    const served = await host(adapter);
    for (const path of ['/admin/console/assets/evil.js', '/admin/console/assets/console.js', '/admin/console/assets/..%2F..%2Fpackage.json', '/admin/console/assets/a/b']) {
      const res = await request(served.server).get(path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toMatchObject({ code: 1, data: null });
      expect(res.text, path).not.toContain('"name"');
    }
  });

  it("sends a trailing slash to the page's own URL, where its relative links resolve", async () => {
    const served = await host(adapter);
    const res = await request(served.server).get('/admin/console/');
    expect(res.status).toBe(308);
    expect(new URL(res.headers.location as string, `${served.url}/admin/console/`).pathname).toBe('/admin/console');
  });

  it('tells the page which parts of the admin API are on, and its largest page of applications', async () => {
    const bare = await host(adapter);
    expect((await request(bare.server).get('/admin/console')).text).toContain(`<body data-parts="" data-client-page="${MAX_CLIENT_PAGE}">`);
    const quota = await host(adapter, { quota: { verifyToken: () => undefined } });
    expect((await request(quota.server).get('/admin/console')).text).toContain(`<body data-parts="rules usage" data-client-page="${MAX_CLIENT_PAGE}">`);
  });

  it('is not there while the admin API is off', async () => {
    const served = await host(adapter, { admin: false });
    expect((await request(served.server).get('/admin/console')).status).toBe(404);
  });

  it('follows admin.basePath', async () => {
    const served = await host(adapter, { admin: { token: TOKEN, basePath: '/ops' } });
    const page = await request(served.server).get('/ops/console');
    expect(page.status).toBe(200);
    for (const file of filesOf(page.text)) expect((await request(served.server).get(`/ops/${file}`)).status, file).toBe(200);
  });
});

/** The platform mounted under `/platform` by the host (`app.use('/platform', courierPlatform())`). */
const MOUNTED: [string, (options: CourierPlatformOptions) => RequestListener][] = [
  ['express', (options) => express().use('/platform', expressPlatform(options as CourierPlatformOptions<express.Request>))],
  ['koa (koa-mount)', (options) => new Koa().use(mount('/platform', koaPlatform(options as CourierPlatformOptions<Koa.Context>))).callback()],
  ['connect', (options) => connect().use('/platform', connectPlatform(options as CourierPlatformOptions<IncomingMessage>))],
];

describe.each(MOUNTED)("the operator console under the host's mount path on %s", (_name, build) => {
  it("names its files relative to the page, so they resolve under the mount path", async () => {
    const served = await serve(build({ courier: false, oauth: false, quota: false, admin: { token: TOKEN } }));
    running.push(served);
    const page = await request(served.server).get('/platform/admin/console');
    expect(page.status).toBe(200);
    for (const file of filesOf(page.text)) {
      const { pathname } = new URL(file, `${served.url}/platform/admin/console`);
      expect(pathname.startsWith('/platform/admin/console/assets/'), file).toBe(true);
      expect((await request(served.server).get(pathname)).status, file).toBe(200);
    }
  });
});
