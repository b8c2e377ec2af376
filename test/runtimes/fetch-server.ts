/**
 * The fetch handler as a Bun, Deno or Node server, started by test/runtimes/fetch-runtimes.test.ts
 * with `bun`, `deno run` or tsx. It mounts OAuth (a test-header "session"), the quota guarding
 * GET /openapi/v1/ping and /openapi/v1/orders (routed on the URL's pathname), the admin API and
 * the courier proxy to UPSTREAM_URL, with memory stores or, with STORE=redis, Redis stores under
 * KEY_PREFIX. It prints `listening <port>` once it answers. Everything else answers the host's own 404, which proves the handler chains.
 */
import { Redis } from 'ioredis';
import { createRedisOAuthStore, createRedisQuotaStore, type CourierPlatformOptions } from '../../src/index.js';
import { courierPlatform } from '../../adapters/fetch.js';

declare const Bun: { serve(options: { port: number; hostname: string; fetch(request: Request, server: unknown): Promise<Response> }): unknown } | undefined;
declare const Deno:
  | { serve(options: { port: number; hostname: string; onListen?: () => void }, handler: (request: Request, info: unknown) => Promise<Response>): unknown }
  | undefined;

const env = (name: string, fallback = ''): string => process.env[name] ?? fallback;
const port = Number(env('PORT'));
const users: Record<string, { sub: string; name: string }> = { alice: { sub: 'user-alice', name: 'Alice Liddell' } };

const redis = env('STORE') === 'redis' ? new Redis(env('REDIS_URL'), { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true }) : undefined;
if (redis) await redis.connect();
const prefix = env('KEY_PREFIX', 'fetch-runtime');

const options: CourierPlatformOptions<Request> = {
  logger: { debug() {}, info() {}, warn() {}, error: (fields, message) => console.error(message, fields) },
  // Through the runtime's HTTP client to the test's sandbox upstream.
  courier: { upstreamUrl: env('UPSTREAM_URL'), credentials: { appId: 'sandbox-app', appSecret: 'sandbox-secret' } },
  oauth: {
    clients: [{ id: 'rp-client', name: 'Relying Party', secret: 'rp-secret-1234', redirectUris: ['http://127.0.0.1:9/callback'] }],
    authenticate: (request) => users[request.headers.get('x-test-user') ?? ''] ?? null,
    ...(redis ? { store: createRedisOAuthStore({ client: redis, prefix: `${prefix}:oauth:` }) } : {}),
  },
  quota: {
    // A day's allowance, not a minute's: the tests' few calls never straddle the period's end.
    defaults: { minute: 0, day: 3, month: 0, cost: 1 },
    ...(redis ? { store: createRedisQuotaStore({ client: redis, prefix: `${prefix}:q` }) } : {}),
  },
  admin: { token: 'admin-token-0123456789abcdef0123456789' },
  bodyLimit: 2048,
  // A proxy in front would set it; the test sends it to see the address reach the brute-force limits.
  clientIp: (request) => (typeof request.headers['x-test-client-ip'] === 'string' ? request.headers['x-test-client-ip'] : request.ip),
};

const platform = courierPlatform(options);
const guard = platform.quota();
await platform.platform.ready();

async function host(request: Request, info: unknown): Promise<Response> {
  const answered = await platform(request, info);
  if (answered) return answered;
  const url = new URL(request.url);
  if (url.pathname === '/openapi/v1/ping') {
    const verdict = await guard(request);
    if (!verdict.pass) return verdict.response;
    return Response.json({ pong: true, client: verdict.identity.clientId, sub: verdict.identity.sub }, { headers: verdict.headers });
  }
  if (url.pathname === '/openapi/v1/orders') {
    const verdict = await guard(request);
    if (!verdict.pass) return verdict.response;
    return Response.json({ orders: [], client: verdict.identity.clientId }, { headers: verdict.headers });
  }
  if (url.pathname === '/host/echo' && request.method === 'POST') return Response.json({ echoed: await request.json() });
  if (url.pathname === '/host/runtime') return Response.json({ runtime: typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node' });
  return new Response('host 404', { status: 404 });
}

const listening = () => console.log(`listening ${port}`);
if (typeof Bun !== 'undefined') {
  Bun.serve({ port, hostname: '127.0.0.1', fetch: host });
  listening();
} else if (typeof Deno !== 'undefined') {
  Deno.serve({ port, hostname: '127.0.0.1', onListen: listening }, host);
} else {
  const { serve } = await import('@hono/node-server');
  serve({ fetch: host, port, hostname: '127.0.0.1' }, listening);
}
