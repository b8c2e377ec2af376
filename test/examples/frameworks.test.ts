/**
 * `EXAMPLE_FRAMEWORK=… [EXAMPLE_RUNTIME=…] npm start` (docs/example.md#hosts): the same example on
 * every host, each run as its own process once. On each, a user signs in through the relying
 * party and approves, the access token from /callback calls the guarded ping, the operator uses
 * the admin API with ADMIN_TOKEN, the API reference and its document are served, the host's
 * pages refuse malformed forms alike; and a start on a port in use is one line and exit code 1
 * on every host.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runExample, startExample, type RunningExample } from '../support/example.js';
import { listenOnLoopback } from '../support/net.js';
import { STACK_TRACE, Visitor, decideAfterLogin, decodeHtml, expectSecurityHeaders, hiddenInput } from './support.js';

const ADMIN_TOKEN = 'example-admin-token-0123456789abcdef';

const HOSTS = [
  { framework: 'express', runtime: 'node', banner: /host: +Express on Node v\d+/ },
  { framework: 'koa', runtime: 'node', banner: /host: +Koa on Node v\d+/ },
  { framework: 'connect', runtime: 'node', banner: /host: +Connect on Node v\d+/ },
  { framework: 'fastify', runtime: 'node', banner: /host: +Fastify on Node v\d+/ },
  { framework: 'hono', runtime: 'node', banner: /host: +Hono on Node v\d+/ },
  { framework: 'hono', runtime: 'bun', banner: /host: +Hono on Bun \d+\.\d+/ },
  { framework: 'hono', runtime: 'deno', banner: /host: +Hono on Deno \d+\.\d+/ },
] as const;

describe.each(HOSTS)('the example on $framework ($runtime)', { timeout: 120_000 }, ({ framework, runtime, banner }) => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startExample({ env: { EXAMPLE_FRAMEWORK: framework, EXAMPLE_RUNTIME: runtime, ADMIN_TOKEN } });
  }, 120_000);
  afterAll(() => example?.stop());

  it('names the framework and the runtime in its start banner', async () => {
    // The banner's lines follow the "listening" line, in chunks of their own.
    await vi.waitFor(() => expect(example.output()).toMatch(banner), { timeout: 5_000 });
  });

  it('signs in through the relying party, and the access token calls the guarded ping', async () => {
    const visitor = new Visitor(example.base);
    const decided = await decideAfterLogin(visitor, '/rp/start', 'approve');
    expect(decided.location?.pathname).toBe('/callback');
    const callback = await visitor.follow(decided);
    expect(callback.status, callback.text.slice(0, 500)).toBe(200);
    expectSecurityHeaders(callback.headers);
    expect(callback.text).toContain('<h1>Signed in as Demo User</h1>');
    const curl = decodeHtml(/<pre id="curl"><code>([^<]*)<\/code><\/pre>/.exec(callback.text)?.[1] ?? '');
    const token = /Bearer ([^']+)'/.exec(curl)?.[1];
    expect(token, curl).toBeDefined();

    const ping = await fetch(`${example.base}/openapi/v1/ping`, { headers: { authorization: `Bearer ${token}` } });
    expect(ping.status).toBe(200);
    expect(await ping.json()).toMatchObject({ code: 0, data: { pong: true, clientId: 'demo-client', sub: 'demo-user-1' } });
    expect(ping.headers.get('ratelimit-policy') ?? ping.headers.get('ratelimit')).toBeTruthy();
    // The guarded API is mounted before the site's pages: it carries none of their headers.
    expect(ping.headers.get('x-frame-options')).toBeNull();
    expect((await fetch(`${example.base}/openapi/v1/ping`)).status).toBe(401);
  });

  it('serves the admin API with ADMIN_TOKEN only', async () => {
    expect((await fetch(`${example.base}/admin/clients`)).status).toBe(401);
    const list = await fetch(`${example.base}/admin/clients`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { data: { id: string }[] }).data).toContainEqual(expect.objectContaining({ id: 'demo-client' }));
  });

  it('serves the API reference, its assets and the document it reads', async () => {
    const docs = await fetch(`${example.base}/api-docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await docs.text()).toContain('<script src="/api-docs/init.js"></script>');
    const bundle = await fetch(`${example.base}/api-docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const document = (await (await fetch(`${example.base}/openapi/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toContain('/openapi/v1/ping');
  });

  it('refuses malformed forms with a plain page, and answers a wrong address with the 404 page', async () => {
    const visitor = new Visitor(example.base);
    const token = hiddenInput((await visitor.open('/login')).text, 'csrf')!;
    const repeated = await visitor.submit('/login', new URLSearchParams([['username', 'demo'], ['username', 'x'], ['password', 'demo'], ['csrf', token]]));
    const json = await visitor.request('/login', { method: 'POST', headers: { 'content-type': 'application/json', origin: example.base }, body: '{}' });
    const large = await visitor.submit('/login', { username: 'demo', password: 'x'.repeat(9 * 1024) });
    const crossSite = await visitor.submit('/login', { username: 'demo', password: 'demo', csrf: token }, { origin: 'https://attacker.example' });
    const missing = await visitor.request('/no-such-page');
    expect([repeated.status, json.status, large.status, crossSite.status, missing.status]).toEqual([400, 415, 413, 403, 404]);
    for (const page of [repeated, json, large, crossSite, missing]) {
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expectSecurityHeaders(page.headers);
      expect(page.text).not.toMatch(STACK_TRACE);
    }
    expect(missing.text).toContain('Nothing here');
  });
});

describe('every host on a port in use', { timeout: 120_000 }, () => {
  const busy = createServer();
  let port: number;
  beforeAll(async () => {
    port = await listenOnLoopback(busy);
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('exits with code 1 and the one line of npm start', async () => {
    // All at once: each run is a whole start up to listen, and they do not share anything.
    const exits = await Promise.all(HOSTS.map(({ framework, runtime }) => runExample({ EXAMPLE_FRAMEWORK: framework, EXAMPLE_RUNTIME: runtime, PORT: String(port) })));
    for (const [index, exit] of exits.entries()) {
      const { framework, runtime } = HOSTS[index]!;
      expect(exit.code, `${framework} on ${runtime}: ${exit.output}`).toBe(1);
      const lines = exit.output.split('\n').filter((line) => line.startsWith('courier-platform example:'));
      expect(lines, `${framework} on ${runtime}`).toEqual([`courier-platform example: port ${port} is in use; set PORT=<a free port> (or stop what listens on 127.0.0.1:${port}) and start again`]);
      expect(exit.output).not.toMatch(/\n\s+at /);
    }
  });
});
