/**
 * The host's own routes in the API document: guarded routes described with
 * `platform.quota(apiPath, doc)`, and path items from `apiDocument.paths`.
 */
import { validate, compileErrors } from '@readme/openapi-parser';
import express from 'express';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import type { GuardedRouteDoc } from '../../src/guard/guarded-doc.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { serve, type Served } from '../support/net.js';
import { fetchDocument } from './support.js';

const ORDER: GuardedRouteDoc = {
  method: 'GET',
  operationId: 'get_order',
  summary: 'One order',
  responses: { 200: { description: 'The order', schema: z.object({ code: z.literal(0), data: z.object({ id: z.string() }) }) } },
};

const OPTIONS: CourierPlatformOptions = {
  logger: silentLogger,
  courier: false,
  apiDocument: {
    title: 'Shop API',
    version: '2.3.0',
    paths: { '/health': { get: { operationId: 'health', summary: 'Liveness', responses: { 200: { description: 'Alive' } } } } },
  },
};

const hosts: Served[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});

const builds = {
  express() {
    const app = express();
    const platform = expressPlatform(OPTIONS);
    app.use(platform);
    app.get('/openapi/v1/orders/:id', platform.quota('/openapi/v1/orders/:id', ORDER), (req, res) => {
      res.json({ code: 0, data: { id: req.params.id } });
    });
    return app;
  },
  koa() {
    const app = new Koa();
    const platform = koaPlatform(OPTIONS);
    app.use(platform);
    const guard = platform.quota('/openapi/v1/orders/:id', ORDER);
    app.use(async (ctx, next) => (ctx.path.startsWith('/openapi/v1/orders/') ? guard(ctx, async () => void (ctx.body = { code: 0 })) : next()));
    return app.callback();
  },
};

describe.each(Object.keys(builds) as (keyof typeof builds)[])('host routes in the API document on %s', (name) => {
  it('lists a described guarded route with the guard\'s answers and headers, and the host\'s own path items', async () => {
    const served = await serve(builds[name]());
    hosts.push(served);
    const document = await fetchDocument(served);
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);

    expect((document as unknown as { info: object }).info).toEqual({ title: 'Shop API', version: '2.3.0' });
    expect(Object.keys(document.paths['/health'] ?? {})).toEqual(['get']);
    const operation = document.paths['/openapi/v1/orders/{id}']?.get as unknown as {
      operationId: string;
      security: object[];
      parameters: { name: string; in: string }[];
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    expect(operation.operationId).toBe('get_order');
    expect(operation.security).toEqual([{ bearer: [] }]);
    expect(operation.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path' })]);
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '401', '429', '503']);
    expect(Object.keys(operation.responses['200']!.headers ?? {}).sort()).toEqual(['RateLimit', 'RateLimit-Policy']);
    expect(Object.keys(operation.responses['429']!.headers ?? {}).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
  });
});

describe('host routes with the platform mounted under a prefix', () => {
  it('OpenAPI 3.1 4.8.9: the platform\'s paths count from the mount point, the host\'s own routes from the root', async () => {
    const app = express();
    const platform = expressPlatform({ ...OPTIONS, apiDocument: { title: 'Shop API', version: '2.3.0' } });
    app.use('/api', platform);
    app.get('/openapi/v1/orders/:id', platform.quota('/openapi/v1/orders/:id', ORDER), (req, res) => {
      res.json({ code: 0, data: { id: req.params.id } });
    });
    const served = await serve(app);
    hosts.push(served);
    const res = await fetch(`${served.url}/api/openapi/v1/openapi.json`);
    const document = (await res.json()) as { servers: { url: string }[]; paths: Record<string, { servers?: { url: string }[] }> };
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(document.servers).toEqual([{ url: `${served.url}/api` }]);
    expect(document.paths['/openapi/v1/get_quota']?.servers).toBeUndefined();
    expect(document.paths['/openapi/v1/orders/{id}']?.servers).toEqual([{ url: served.url }]);
  });
});

describe('describing a guarded route', () => {
  it('needs the path it is listed under, once per method', () => {
    const platform = expressPlatform(OPTIONS);
    expect(() => platform.quota(undefined, ORDER)).toThrow(ConfigurationError);
    platform.quota('/openapi/v1/orders/:id', ORDER);
    expect(() => platform.quota('/openapi/v1/orders/:id', ORDER)).toThrow(/described twice/);
    platform.quota('/openapi/v1/orders/:id', { ...ORDER, method: 'DELETE', operationId: 'delete_order' });
  });
});
