/**
 * The API document at {quota.basePath}/openapi.json, through HTTP on every adapter: a valid
 * OpenAPI 3.1 document listing exactly the routes the platform answers, no more, no less.
 */
import { validate, compileErrors } from '@readme/openapi-parser';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Router, type Route } from '../../src/core/router.js';
import { ADAPTERS } from '../support/apps.js';
import { sandboxUpstream } from '../support/courier.js';
import type { Served } from '../support/net.js';
import { ADMIN_TOKEN, fetchDocument, fullOptions, operationsOf, serveHost } from './support.js';

const upstream = sandboxUpstream();
const hosts: Served[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});

async function host(adapter: (typeof ADAPTERS)[number], overrides = {}): Promise<Served> {
  const served = await serveHost(adapter, fullOptions(upstream().url, overrides));
  hosts.push(served);
  return served;
}

describe.each(ADAPTERS)('the API document on $name', (adapter) => {
  it('is a valid OpenAPI 3.1 document, cacheable, with the caller\'s origin as its server', async () => {
    const served = await host(adapter);
    const res = await request(served.server).get('/openapi/v1/openapi.json');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    // Without a publicUrl its URLs come from Host (RFC 9110 7.2): caches key on it, and one no URL can carry is a 400.
    expect(res.headers.vary).toMatch(/\bhost\b/i);
    expect((await request(served.server).get('/openapi/v1/openapi.json').set('host', 'a b')).status).toBe(400);
    const document = await fetchDocument(served);
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.servers).toEqual([{ url: served.url }]);
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('RFC 9110 13.1.2: carries an ETag; If-None-Match with it is a 304 without a body, and another Host gets its own document', async () => {
    const served = await host(adapter);
    const first = await request(served.server).get('/openapi/v1/openapi.json');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await request(served.server).get('/openapi/v1/openapi.json');
    expect(again.headers.etag).toBe(etag);
    expect(again.text).toBe(first.text);
    const unchanged = await request(served.server).get('/openapi/v1/openapi.json').set('if-none-match', `"other", ${etag}`);
    expect(unchanged.status).toBe(304);
    expect(unchanged.text ?? '').toBe('');
    expect(unchanged.headers.etag).toBe(etag);
    expect((await request(served.server).get('/openapi/v1/openapi.json').set('if-none-match', '"other"')).status).toBe(200);
    const elsewhere = await request(served.server).get('/openapi/v1/openapi.json').set('host', 'api.example.test');
    expect(elsewhere.headers.etag).not.toBe(etag);
    expect(JSON.parse(elsewhere.text).servers).toEqual([{ url: 'http://api.example.test' }]);
  });

  it('RFC 9111 4.3.4: a 304 carries no Content-Type of its own, so a cache that refreshes its stored document from it keeps application/json', async () => {
    const served = await host(adapter);
    const first = await request(served.server).get('/openapi/v1/openapi.json');
    const unchanged = await request(served.server).get('/openapi/v1/openapi.json').set('if-none-match', first.headers.etag as string);
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers['content-type'] ?? 'application/json; charset=utf-8').toBe('application/json; charset=utf-8');
  });

  it('describes the OAuth flows with the issuer\'s URLs', async () => {
    const served = await host(adapter);
    const { securitySchemes } = (await fetchDocument(served)).components;
    expect(Object.keys(securitySchemes).sort()).toEqual(['adminBearer', 'bearer', 'clientBasic', 'courierBasic', 'oauth2']);
    expect(securitySchemes.oauth2?.flows?.clientCredentials?.tokenUrl).toBe(`${served.url}/oauth/token`);
  });

  it('lists the admin API only while it is on', async () => {
    const withAdmin = operationsOf(await fetchDocument(await host(adapter)));
    const without = operationsOf(await fetchDocument(await host(adapter, { admin: false })));
    expect(withAdmin).toContain('GET /admin/clients/{id}');
    expect(withAdmin).toContain('GET /admin/usage/history');
    expect(without.filter((operation) => operation.includes('/admin/'))).toEqual([]);
    expect(withAdmin.filter((operation) => !operation.includes('/admin/'))).toEqual(without);
  });
});

describe('the route table and the document', () => {
  /** The routes of the platforms built while `build` runs, read from their own route tables. */
  async function routeTable(build: () => Promise<Served>): Promise<{ served: Served; routes: Route[] }> {
    const routers: Router[] = [];
    const add = Router.prototype.add;
    vi.spyOn(Router.prototype, 'add').mockImplementation(function (this: Router, route: Route) {
      if (!routers.includes(this)) routers.push(this);
      add.call(this, route);
    });
    const served = await build();
    expect(routers).toHaveLength(1);
    return { served, routes: routers[0]!.list() };
  }

  it.each([
    ['every part on', {}],
    ['OAuth and admin off', { oauth: false, admin: false, quota: { verifyToken: () => undefined } }],
    ['the courier proxy off, parts moved', { courier: false, oauth: { basePath: '/auth' }, quota: { basePath: '/api/v2' }, admin: { token: ADMIN_TOKEN, basePath: '/ops' } }],
  ])('every route the platform answers is in the document, and every operation of the document is a route (%s)', async (_name, overrides) => {
    const adapter = ADAPTERS[0]!;
    const { served, routes } = await routeTable(() => host(adapter, overrides));
    const base = (overrides as { quota?: { basePath?: string } }).quota?.basePath ?? '/openapi/v1';
    const document = await fetchDocument(served, `${base}/openapi.json`);
    const fromRoutes = routes.map((route) => `${route.method} ${route.path.replace(/:([^/]+)/g, '{$1}')}`);
    expect(operationsOf(document).sort()).toEqual(fromRoutes.sort());
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('each documented operation is answered by the platform, not passed on to the host', async () => {
    const adapter = ADAPTERS[0]!;
    const served = await host(adapter);
    const document = await fetchDocument(served);
    for (const operation of operationsOf(document)) {
      const [method, path] = operation.split(' ') as [string, string];
      const res = await request(served.server)[method.toLowerCase() as 'get'](path.replace(/\{[^}]+\}/g, 'x'));
      // A 404 in the envelope is the platform's own answer (no such file, `x`); the host's is not.
      const passedOn = res.status === 404 && (res.body as { code?: unknown }).code === undefined;
      expect([operation, passedOn]).toEqual([operation, false]);
      expect(res.status, operation).not.toBe(405);
    }
  });
});
