/**
 * The fetch handler and the Hono middleware under a prefix (a Next.js catch-all route, a Hono
 * sub-path): the platform's paths below it, everything else left to the host.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { courierPlatform as fetchPlatform } from '../../adapters/fetch.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { SANDBOX_APP } from '../support/courier.js';

const options = { logger: silentLogger, courier: { credentials: { ...SANDBOX_APP } }, oauth: false as const, quota: false as const };

describe('courier-platform/fetch with a prefix', () => {
  const platform = fetchPlatform(options, { prefix: '/api' });

  it('answers its paths below the prefix', async () => {
    const res = await platform(new Request('http://shop.example/api/courier/get_express_type'));
    expect(res?.status).toBe(200);
    expect(((await res!.json()) as { code: number }).code).toBe(0);
  });

  it('gives undefined outside it, so the host answers', async () => {
    expect(await platform(new Request('http://shop.example/courier/get_express_type'))).toBeUndefined();
    expect(await platform(new Request('http://shop.example/apix/courier/get_express_type'))).toBeUndefined();
    expect(await platform(new Request('http://shop.example/api/elsewhere'))).toBeUndefined();
  });

  it('refuses a prefix that does not start with a slash or ends with one, naming the field', () => {
    for (const prefix of ['api', '/api/']) {
      expect(() => fetchPlatform(options, { prefix })).toThrow(ConfigurationError);
      expect(() => fetchPlatform(options, { prefix })).toThrow(/prefix/);
    }
  });
});

describe('courier-platform/hono with a prefix', () => {
  it('answers below the prefix and passes everything else to the app', async () => {
    const app = new Hono();
    app.use(honoPlatform(options, { prefix: '/api' }));
    app.get('/courier/get_express_type', (c) => c.text('the host'));
    const platformAnswer = await app.request('/api/courier/get_express_type');
    expect(((await platformAnswer.json()) as { code: number }).code).toBe(0);
    expect(await (await app.request('/courier/get_express_type')).text()).toBe('the host');
  });
});

describe('courier-platform/hono and dot segments', () => {
  /** What Deno hands over for `GET /x/../courier/get_express_type`: the target as the client sent it. */
  const asSent = (target: string) => {
    const request = new Request('http://shop.example/');
    Object.defineProperty(request, 'url', { value: `http://shop.example${target}` });
    return request;
  };

  it("RFC 3986 5.2.4: the platform sees the path Hono routes on, so no path reaches it past the app's own middleware", async () => {
    const app = new Hono();
    app.use('/courier/*', async (c) => c.text('refused by the host', 403));
    app.use(honoPlatform(options));
    expect((await app.fetch(asSent('/courier/get_express_type'))).status).toBe(403);
    const dotted = await app.fetch(asSent('/x/../courier/get_express_type'));
    expect(dotted.status).toBe(404);
    expect(await dotted.text()).not.toContain('"code":0');
  });
});
