/**
 * What only the Fastify plugin does: its register prefix, parsers of its own beside the host's,
 * request.ip under Fastify's trustProxy, route hooks on both majors, and a clear error for the
 * factory registered uncalled. The shared HTTP suites cover the rest (ADAPTERS).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import Fastify4 from 'fastify4';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { courierPlatform } from '../../adapters/fastify.js';
import { silentLogger } from '../../src/core/logger.js';
import { fastifyListener } from '../support/apps.js';
import { SANDBOX_APP } from '../support/courier.js';
import { serve, type Served } from '../support/net.js';
import { CONFIDENTIAL, cheapClients, SERVICE, sharedSigningKey } from '../support/oauth.js';

/** Fastify's router switches that route other spellings of a path to its route (Fastify 4 has them at the top level). */
interface RouterSwitches {
  useSemicolonDelimiter?: boolean;
  ignoreDuplicateSlashes?: boolean;
}

interface Major {
  name: string;
  create(options?: { trustProxy?: boolean; router?: RouterSwitches }): FastifyInstance;
}
// Fastify 4's instance differs from 5's in types only, for what these tests use.
const MAJORS: Major[] = [
  { name: 'fastify 5', create: ({ router, ...options } = {}) => Fastify({ ...options, ...(router ? { routerOptions: router } : {}) }) },
  { name: 'fastify 4', create: ({ router, ...options } = {}) => Fastify4({ ...options, ...router }) as unknown as FastifyInstance },
];

const courier = { credentials: { ...SANDBOX_APP } };
const served: Served[] = [];
afterEach(async () => {
  await Promise.all(served.splice(0).map((s) => s.close()));
});

async function start(app: FastifyInstance): Promise<Served> {
  const server = await serve(fastifyListener(app as never));
  served.push(server);
  return server;
}

describe.each(MAJORS)('the Fastify plugin on $name', ({ create }) => {
  it('serves the platform under the register prefix, and publishes URLs that carry it', async () => {
    const app = create();
    const platform = courierPlatform({ logger: silentLogger, courier, quota: false, oauth: { clients: await cheapClients(), signingKeys: [await sharedSigningKey()] } });
    app.register(platform, { prefix: '/api' });
    await platform.platform.ready();
    const { server, url } = await start(app);
    const call = await request(server).get('/api/courier/get_express_type');
    expect(call.status).toBe(200);
    expect(call.body.code).toBe(0);
    expect((await request(server).get('/courier/get_express_type')).status).toBe(404);
    const discovery = await request(server).get('/api/oauth/.well-known/openid-configuration');
    expect(discovery.status).toBe(200);
    expect(discovery.body.issuer).toBe(`${url}/api/oauth`);
    // Under the prefix the platform's own 404 and 405, in its envelope.
    const unknown = await request(server).get('/api/courier/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe(1);
    const wrongMethod = await request(server).delete('/api/courier/get_express_type');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET');
  });

  it("keeps its parsers to itself: the host's text parser runs for the host's route, the platform answers 415", async () => {
    const app = create();
    app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, `host parsed: ${String(body)}`));
    app.register(courierPlatform({ logger: silentLogger, courier, oauth: false, quota: false }));
    app.post('/host/echo', async (req) => ({ echoed: req.body }));
    const { server } = await start(app);
    const host = await request(server).post('/host/echo').set('content-type', 'text/plain').send('hello');
    expect(host.body).toEqual({ echoed: 'host parsed: hello' });
    const hostJson = await request(server).post('/host/echo').send({ a: 1 });
    expect(hostJson.body).toEqual({ echoed: { a: 1 } });
    const refused = await request(server).post('/courier/cancel_order').set('content-type', 'text/plain').send('{"orderId":"SO1"}');
    expect(refused.status).toBe(415);
    expect(refused.body.code).toBe(1);
  });

  it('RFC 6749 10.10: with trustProxy, request.ip (the forwarded address) is the address the brute-force limit counts', async () => {
    const app = create({ trustProxy: true });
    const seen: (string | undefined)[] = [];
    const platform = courierPlatform({
      logger: silentLogger,
      courier: false,
      quota: false,
      oauth: { clients: await cheapClients(), signingKeys: [await sharedSigningKey()] },
      clientIp: (req) => (seen.push(req.ip), req.ip),
    });
    app.register(platform);
    await platform.platform.ready();
    const { server } = await start(app);
    const res = await request(server)
      .post('/oauth/token')
      .set({ 'x-forwarded-for': '203.0.113.7', authorization: `Basic ${Buffer.from(`${CONFIDENTIAL.id}:wrong-secret`).toString('base64')}` })
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x' });
    expect(res.status).toBe(401);
    expect(seen).toContain('203.0.113.7');
  });

  it('the quota hook answers through reply: 401 without a token, the handler does not run', async () => {
    const app = create();
    const platform = courierPlatform({ logger: silentLogger, courier: false, oauth: { clients: await cheapClients(), signingKeys: [await sharedSigningKey()] } });
    app.register(platform);
    let ran = false;
    app.get('/openapi/v1/ping', { onRequest: platform.quota() }, async () => {
      ran = true;
      return 'pong';
    });
    await platform.platform.ready();
    const { server } = await start(app);
    const res = await request(server).get('/openapi/v1/ping');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(res.body.code).toBe(1);
    expect(ran).toBe(false);
  });

  it("counts a call under the path of the route Fastify matched: '/ping;x' and '//ping', which its router switches route to '/ping', get no allowance of their own", async () => {
    const app = create({ router: { useSemicolonDelimiter: true, ignoreDuplicateSlashes: true } });
    const platform = courierPlatform({ logger: silentLogger, courier: false, quota: { defaults: { minute: 1 } }, oauth: { clients: await cheapClients(), signingKeys: [await sharedSigningKey()] } });
    app.register(platform);
    let ran = 0;
    app.get('/openapi/v1/ping', { preHandler: platform.quota() }, async () => {
      ran += 1;
      return 'pong';
    });
    await platform.platform.ready();
    const { server } = await start(app);
    const issued = await request(server).post('/oauth/token').auth(SERVICE.id, SERVICE.secret).type('form').send({ grant_type: 'client_credentials' });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const call = (path: string) => request(server).get(path).set('authorization', `Bearer ${issued.body.access_token}`);
    expect((await call('/openapi/v1/ping')).status).toBe(200);
    for (const path of ['/openapi/v1/ping;a', '/openapi/v1/ping;b', '//openapi/v1/ping', '/openapi//v1//ping']) {
      const res = await call(path);
      expect(res.status, path).toBe(429);
      expect(res.body.data.api_path).toBe('/openapi/v1/ping');
    }
    expect(ran).toBe(1);
  });

  it("a percent-encoded spelling of a platform path, which Fastify's router decodes to the platform's route, is the host's 404, as on every other host", async () => {
    const app = create();
    const platform = courierPlatform({ logger: silentLogger, courier, admin: { token: 'an-admin-token-of-32-characters-x' }, oauth: { clients: await cheapClients(), signingKeys: [await sharedSigningKey()] } });
    app.register(platform, { prefix: '/api' });
    await platform.platform.ready();
    const { server } = await start(app);
    for (const path of ['/api/%61dmin/clients', '/api/c%6furier/get_express_type', '/api/openapi/v1/%67et_quota', '/%61pi/admin/clients']) {
      const answer = await request(server).get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.text, path).not.toMatch(/onSent|TypeError|Internal/);
    }
    expect((await request(server).post('/api/%61dmin/clients').send({})).status).toBe(404);
  });

  it('two platforms mount under two prefixes of one app', async () => {
    const app = create();
    app.register(courierPlatform({ logger: silentLogger, courier, oauth: false, quota: false }), { prefix: '/a' });
    app.register(courierPlatform({ logger: silentLogger, courier, oauth: false, quota: false }), { prefix: '/b' });
    const { server } = await start(app);
    for (const prefix of ['/a', '/b']) expect((await request(server).get(`${prefix}/courier/get_express_type`)).body.code).toBe(0);
  });

  it('registered uncalled, it fails at start with a message that says how to register it', async () => {
    const app = create();
    app.register(courierPlatform as never);
    await expect(app.ready()).rejects.toThrow(/register what it returns/);
  });
});
