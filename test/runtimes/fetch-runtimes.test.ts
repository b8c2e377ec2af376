/**
 * The fetch handler (courier-platform/fetch) served by Bun, Deno and Node, driven over HTTP: the
 * courier proxy, the OAuth flow, the quota guard, the admin API, the body limit, and requests
 * that are not the platform's going on to the host. Each runtime comes from the project's own
 * devDependencies (the npm packages `bun` and `deno` ship their binaries).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxUpstream } from '../support/courier.js';
import { freePort } from '../support/net.js';
import { redisUrl, uniqueName } from '../support/services.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = 'test/runtimes/fetch-server.ts';
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

const RUNTIMES = {
  node: [bin('tsx'), script],
  bun: [bin('bun'), script],
  // Sloppy imports map the sources' `.js` specifiers to their `.ts` files, as tsx and Bun do.
  deno: [bin('deno'), 'run', '--allow-all', '--sloppy-imports', script],
} as const;
type Runtime = keyof typeof RUNTIMES;

const STORES = redisUrl ? (['memory', 'redis'] as const) : (['memory'] as const);
if (!redisUrl) {
  if (process.env.REQUIRE_SERVICES === '1') throw new Error('REDIS_URL is not set but REQUIRE_SERVICES=1: the Redis runs must run');
  console.warn('\n  [skipped] the fetch runtimes on Redis stores: set REDIS_URL to run them\n');
}

const CLIENT = { id: 'rp-client', secret: 'rp-secret-1234', redirectUri: 'http://127.0.0.1:9/callback' };
const ADMIN = { authorization: 'Bearer admin-token-0123456789abcdef0123456789' };

interface Started {
  child: ChildProcess;
  origin: string;
  output: () => string;
}

async function start(runtime: Runtime, store: string, keyPrefix: string, upstreamUrl: string): Promise<Started> {
  const port = await freePort();
  const [command, ...args] = RUNTIMES[runtime];
  // Deno's compile cache goes under test/artifacts/ (ignored by git), wherever HOME points or not.
  const env = { ...process.env, PORT: String(port), UPSTREAM_URL: upstreamUrl, STORE: store, KEY_PREFIX: keyPrefix, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', DENO_DIR: `${root}test/artifacts/deno` };
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${runtime} did not start within 60 s:\n${output}`)), 60_000);
    const check = () => {
      if (output.includes(`listening ${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${runtime} exited with ${code}:\n${output}`));
    });
  });
  return { child, origin: `http://127.0.0.1:${port}`, output: () => output };
}

function stop(started: Started | undefined): Promise<void> {
  if (!started || started.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    started.child.once('exit', () => resolve());
    started.child.kill('SIGTERM');
  });
}

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-test-user': 'alice' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

/** A POST whose body arrives in chunks without a Content-Length, which fetch() cannot send. */
function chunkedPost(origin: string, path: string, chunks: string[]): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

/** RFC 6749 4.1: authorize as alice, approve (the first time), exchange the code; the access token. */
async function accessToken(origin: string): Promise<string> {
  const state = randomBytes(6).toString('hex');
  const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT.id, redirect_uri: CLIENT.redirectUri, scope: 'openid profile', state });
  const page = await fetch(`${origin}/oauth/authorize?${query}`, { headers: { 'x-test-user': 'alice' }, redirect: 'manual' });
  let callback = page.headers.get('location');
  if (!callback) {
    // No consent remembered yet: the consent page.
    expect(page.status).toBe(200);
    const transaction = /name="transaction" value="([^"]*)"/.exec(await page.text())![1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"');
    const consent = await fetch(`${origin}/oauth/consent`, form({ transaction, decision: 'approve' }));
    expect(consent.status).toBe(303);
    callback = consent.headers.get('location');
  }
  const code = new URL(callback!).searchParams.get('code')!;
  expect(code).toBeTruthy();

  const basic = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`;
  const tokenRes = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CLIENT.redirectUri }).toString(),
  });
  expect(tokenRes.status).toBe(200);
  return ((await tokenRes.json()) as { access_token: string }).access_token;
}

/** A GET of the request target exactly as written: fetch() would resolve its dot segments before sending. */
function rawGet(origin: string, target: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/`, { path: target, headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.end();
  });
}

const upstream = sandboxUpstream();
const cases = (Object.keys(RUNTIMES) as Runtime[]).flatMap((runtime) => STORES.map((store) => ({ runtime, store })));

describe.each(cases)('courier-platform/fetch on $runtime with $store stores', ({ runtime, store }) => {
  const keyPrefix = uniqueName(`fetch_${runtime}`);
  let server: Started | undefined;
  let origin = '';

  beforeAll(async () => {
    server = await start(runtime, store, keyPrefix, upstream().url);
    origin = server.origin;
  }, 70_000);

  afterAll(async () => {
    await stop(server);
    if (store !== 'redis') return;
    const redis = new Redis(redisUrl!);
    const keys = [...(await redis.keys(`${keyPrefix}:*`)), ...(await redis.keys(`{${keyPrefix}:*`))];
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('is served by that runtime', async () => {
    expect(await (await fetch(`${origin}/host/runtime`)).json()).toEqual({ runtime });
  });

  it('answers a courier read through the proxy and the runtime’s HTTP client (code 0)', async () => {
    const res = await fetch(`${origin}/courier/get_balance`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { code: number }).code).toBe(0);
  });

  it('hands a path that is not the platform’s back to the host, body unread', async () => {
    const res = await fetch(`${origin}/host/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(await res.json()).toEqual({ echoed: { a: 1 } });
    expect((await fetch(`${origin}/elsewhere`)).status).toBe(404);
  });

  it('answers 413 in the envelope for a body over bodyLimit, declared or chunked', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(4096) });
    const declared = await fetch(`${origin}/courier/create_order`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { code: number }).code).toBe(1);
    const chunked = await chunkedPost(origin, '/courier/create_order', [big.slice(0, 2000), big.slice(2000)]);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.text)).toMatchObject({ code: 1 });
  });

  it('reads a JSON body within the limit and validates it (400 naming the field)', async () => {
    const res = await fetch(`${origin}/courier/create_order`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/\w+/);
  });

  it("RFC 6749 4.1: authorize, consent, token; the token passes the quota guard until the day's allowance is used up", async () => {
    const token = await accessToken(origin);
    const auth = { authorization: `Bearer ${token}` };
    for (let i = 0; i < 3; i++) {
      const ok = await fetch(`${origin}/openapi/v1/ping`, { headers: auth });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ pong: true, client: CLIENT.id, sub: 'user-alice' });
      expect(ok.headers.get('ratelimit-limit') ?? ok.headers.get('ratelimit')).toBeTruthy();
    }
    const refused = await fetch(`${origin}/openapi/v1/ping`, { headers: auth });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('the guard answers 401 without a token', async () => {
    const res = await fetch(`${origin}/openapi/v1/ping`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  it('RFC 3986 5.2.4: a path with dot segments is the path it resolves to, for the platform and for the quota guard', async () => {
    // The host routes on new URL(request.url).pathname, which resolves them whatever the runtime hands over.
    const jwks = await rawGet(origin, '/host/../oauth/jwks');
    expect(jwks.status).toBe(200);
    expect(JSON.parse(jwks.text)).toHaveProperty('keys');
    expect((await rawGet(origin, '/oauth/x/%2e%2e/jwks')).status).toBe(200);

    // Every spelling of the guarded route counts against its one allowance (3 a day).
    const auth = { authorization: `Bearer ${await accessToken(origin)}` };
    for (const target of ['/openapi/v1/x/../orders', '/openapi/v1/./orders', '/openapi/v1/y/%2e%2e/orders']) {
      const res = await rawGet(origin, target, auth);
      expect(res.status, target).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ orders: [], client: CLIENT.id });
    }
    expect((await rawGet(origin, '/openapi/v1/orders', auth)).status).toBe(429);
  });

  it('serves the admin API and its metrics to its token only', async () => {
    expect((await fetch(`${origin}/admin/clients`)).status).toBe(401);
    const res = await fetch(`${origin}/admin/clients`, { headers: ADMIN });
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain(CLIENT.id);
    const metrics = await fetch(`${origin}/admin/metrics`, { headers: ADMIN });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# HELP /m);
  });

  it("answers HEAD without a body, its Content-Length the GET body's (RFC 9110 8.6)", async () => {
    const res = await fetch(`${origin}/oauth/jwks`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    const get = await fetch(`${origin}/oauth/jwks`);
    expect(res.headers.get('content-length')).toBe(String((await get.arrayBuffer()).byteLength));
  });
});

describe('courier-platform/fetch on Deno without --allow-read', () => {
  it('refuses to start with the admin API on, saying to add --allow-read (the console reads its files at start)', async () => {
    const env = { ...process.env, PORT: String(await freePort()), UPSTREAM_URL: 'http://127.0.0.1:9', NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', DENO_DIR: `${root}test/artifacts/deno` };
    const child = spawn(bin('deno'), ['run', '--allow-env', '--allow-net', '--sloppy-imports', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(output).not.toContain('listening');
    expect(output).toMatch(/ConfigurationError: courier-platform: admin: the operator console's file \S+ cannot be read: the runtime denies reading it \(on Deno, add --allow-read\)/);
  }, 60_000);
});
