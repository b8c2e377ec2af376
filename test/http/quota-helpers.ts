/**
 * Host apps for the quota's HTTP tests: each mounts the platform (OAuth with the harness's
 * clients, quota, an injected clock) and guards two host routes of its own with
 * `platform.quota()`. Access tokens come through the public flow: authorize, consent, token.
 *
 * Whole though past 350 lines: every file that imports it uses all three parts together, the host
 * (startHost), the token flow (accessToken or authorizationCode) and the calls (ping, getQuota,
 * usedOf), and the calls name the very routes the host mounts.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import connect from 'connect';
import express from 'express';
import Koa from 'koa';
import { getRequestListener } from '@hono/node-server';
import Fastify, { type FastifyRequest } from 'fastify';
import { Hono, type Context } from 'hono';
import request from 'supertest';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { courierPlatform as fastifyPlatform } from '../../adapters/fastify.js';
import { courierPlatform as fetchPlatform } from '../../adapters/fetch.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import { fastifyListener } from '../support/apps.js';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import type { OAuthOptions } from '../../src/oauth/options.js';
import type { CourierPlatformOptions, QuotaOptions } from '../../src/options.js';
import type { QuotaIdentity } from '../../src/quota/index.js';
import { USERS, cheapClients, listen, oauthTestOptions, sharedSigningKey, type AdapterName } from '../support/oauth.js';

export { CONFIDENTIAL, OTHER, USERS, ADAPTER_NAMES, type AdapterName } from '../support/oauth.js';

export const PING = '/openapi/v1/ping';
export const ORDERS = '/openapi/v1/orders';
/** Only the Express host has it: the endpoint named explicitly with `platform.quota(ORDER_ITEM)`. */
export const ORDER_ITEM = '/openapi/v1/orders/:id';
/** A GET route beyond ASCII, answered like PING: sent percent-encoded (Node refuses raw bytes), routed by Fastify under the characters. */
export const ARGER = '/openapi/v1/Ärger';
/** A GET route whose path holds an escaped `?` (`%3F`), answered like PING: a path holds a `?` only escaped. */
export const QUERY_MARK = '/openapi/v1/x%3Fy';

// ---------------------------------------------------------------------------------------------
// Clock

export interface TestClock {
  now(): number;
  iso(): string;
  advance(ms: number): void;
  set(ms: number): void;
}

/** 2031-05-12T08:30:15Z: 15 s into a minute, far from the wall clock. */
export const START = Date.UTC(2031, 4, 12, 8, 30, 15);

export function testClock(startMs = START): TestClock {
  let at = startMs;
  return {
    now: () => at,
    iso: () => new Date(at).toISOString(),
    advance(ms) {
      at += ms;
    },
    set(ms) {
      at = ms;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// OAuth: the harness's clients with cheap secret hashes and one signing key per file

async function oauthOptions(lifetimes: OAuthOptions['lifetimes']): Promise<OAuthOptions> {
  return { ...oauthTestOptions(), clients: await cheapClients(), signingKeys: [await sharedSigningKey()], ...(lifetimes ? { lifetimes } : {}) };
}

function userOf(headers: IncomingMessage['headers']) {
  const name = headers['x-test-user'];
  return typeof name === 'string' && USERS[name] ? USERS[name] : null;
}

// ---------------------------------------------------------------------------------------------
// Host apps

/** What a guarded host handler answers: which handler ran and what the guard handed over. */
export interface HostBody {
  handler: Handler;
  platformAuth: QuotaIdentity | undefined;
}

export interface QuotaHost {
  readonly adapter: AdapterName;
  readonly origin: string;
  readonly clock: TestClock;
  /** Every run of a host handler, in order ('ping' / 'orders'). */
  readonly handled: string[];
  http(): ReturnType<typeof request>;
  close(): Promise<void>;
}

export interface HostSetup {
  quota: QuotaOptions;
  clock?: TestClock;
  logger?: Logger;
  /** Access-token lifetime in seconds (default 3600). */
  accessTokenSeconds?: number;
  /** More OAuth options (a shared store, its deadline). */
  oauth?: Partial<OAuthOptions>;
  /** The other parts (courier, admin); the courier proxy is off unless given. */
  platform?: Pick<CourierPlatformOptions, 'courier' | 'admin' | 'onEvent'>;
}

type Handler = 'ping' | 'orders' | 'order';
const ROUTES: { method: 'GET' | 'POST'; path: string; handler: Handler }[] = [
  { method: 'GET', path: PING, handler: 'ping' },
  { method: 'POST', path: ORDERS, handler: 'orders' },
  { method: 'GET', path: encodeURI(ARGER), handler: 'ping' },
  { method: 'GET', path: QUERY_MARK, handler: 'ping' },
];

function sendJson(res: ServerResponse, body: unknown): void {
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

/** Like @koa/router's defaults (and Express's and Connect's): case-insensitive, a trailing slash allowed. */
/** The URL's path as the WHATWG URL reads it; as sent when the Host makes no URL (`999.1.1.1`), which the platform answers itself. */
function pathnameOf(request: Request): string {
  try {
    return new URL(request.url).pathname;
  } catch {
    return request.url.replace(/^[a-z]+:\/\/[^/]*/i, '').replace(/[?#].*$/, '');
  }
}

function hostPath(path: string): string {
  return (path.length > 1 ? path.replace(/\/+$/, '') : path).toLowerCase();
}

/** The host app as a Node listener, with the platform mounted and the two guarded routes. */
async function hostListener(adapter: AdapterName, setup: HostSetup, clock: TestClock, handled: string[]) {
  const oauth = { ...(await oauthOptions(setup.accessTokenSeconds ? { accessToken: setup.accessTokenSeconds } : undefined)), ...setup.oauth };
  const base = { courier: false as const, ...setup.platform, quota: setup.quota, now: clock.now, logger: setup.logger ?? silentLogger };
  const answer = (handler: Handler, platformAuth: QuotaIdentity | undefined): HostBody => {
    handled.push(handler);
    return { handler, platformAuth };
  };

  if (adapter === 'koa') {
    const app = new Koa();
    app.silent = true;
    const platform = koaPlatform({ ...base, oauth: { ...oauth, authenticate: (ctx) => userOf(ctx.req.headers) } as OAuthOptions<Koa.Context> });
    app.use(platform);
    for (const route of ROUTES) {
      const guard = platform.quota();
      app.use(async (ctx, next) => {
        // Like @koa/router's defaults (and Express's and Connect's): case-insensitive, a trailing slash allowed.
        const path = ctx.path.length > 1 ? ctx.path.replace(/\/+$/, '') : ctx.path;
        if (ctx.method !== route.method || path.toLowerCase() !== route.path.toLowerCase()) return next();
        await guard(ctx, async () => {
          ctx.body = answer(route.handler, ctx.state.platformAuth as QuotaIdentity | undefined);
        });
      });
    }
    return { listener: app.callback(), ready: () => platform.platform.ready() };
  }

  if (adapter === 'fastify') {
    // Fastify's own switches for what Express, Koa and Connect route by default.
    const app = Fastify({ routerOptions: { ignoreTrailingSlash: true, caseSensitive: false } });
    const platform = fastifyPlatform({ ...base, oauth: { ...oauth, authenticate: (req) => userOf(req.headers) } as OAuthOptions<FastifyRequest> });
    app.register(platform);
    app.get(PING, { preHandler: platform.quota() }, async (request) => answer('ping', request.platformAuth));
    app.post(ORDERS, { onRequest: platform.quota() }, async (request) => answer('orders', request.platformAuth));
    app.get(ARGER, { preHandler: platform.quota() }, async (request) => answer('ping', request.platformAuth));
    // Fastify routes on the decoded path, where `%3F` is a `?` no static route can hold: a parameter takes it.
    app.get('/openapi/v1/x:rest', { preHandler: platform.quota() }, async (request) => answer('ping', request.platformAuth));
    return { listener: fastifyListener(app as never), ready: () => platform.platform.ready() };
  }

  if (adapter === 'hono') {
    const app = new Hono({ getPath: (req) => hostPath(pathnameOf(req)) });
    const platform = honoPlatform({ ...base, oauth: { ...oauth, authenticate: (c) => userOf(Object.fromEntries(c.req.raw.headers)) } as OAuthOptions<Context> });
    app.use(platform);
    app.get(PING, platform.quota(), (c) => c.json(answer('ping', c.get('platformAuth'))));
    app.post(ORDERS, platform.quota(), (c) => c.json(answer('orders', c.get('platformAuth'))));
    app.get(hostPath(encodeURI(ARGER)), platform.quota(), (c) => c.json(answer('ping', c.get('platformAuth'))));
    app.get(hostPath(QUERY_MARK), platform.quota(), (c) => c.json(answer('ping', c.get('platformAuth'))));
    return { listener: getRequestListener(app.fetch), ready: () => platform.platform.ready() };
  }

  if (adapter === 'fetch') {
    const platform = fetchPlatform({ ...base, oauth: { ...oauth, authenticate: (req) => userOf(Object.fromEntries(req.headers)) } as OAuthOptions<Request> });
    const guards = new Map(ROUTES.map((route) => [`${route.method} ${route.path.toLowerCase()}`, { handler: route.handler, guard: platform.quota() }]));
    const listener = getRequestListener(async (request, env) => {
      const answered = await platform(request, env);
      if (answered) return answered;
      const route = guards.get(`${request.method} ${hostPath(new URL(request.url).pathname)}`);
      if (!route) return new Response('Not found', { status: 404 });
      const verdict = await route.guard(request);
      if (!verdict.pass) return verdict.response;
      return Response.json(answer(route.handler, verdict.identity), { headers: verdict.headers });
    });
    return { listener, ready: () => platform.platform.ready() };
  }

  if (adapter === 'connect') {
    const app = connect();
    const platform = connectPlatform({ ...base, oauth: { ...oauth, authenticate: (req) => userOf(req.headers) } as OAuthOptions<IncomingMessage> });
    app.use(platform);
    for (const route of ROUTES) {
      const guard = platform.quota();
      // Mounted on the path: Connect strips it from req.url, the guard must count the public path.
      app.use(route.path, (req: IncomingMessage & { platformAuth?: QuotaIdentity }, res: ServerResponse, next: (error?: unknown) => void) => {
        if (req.method !== route.method) return next();
        guard(req, res, (error?: unknown) => (error ? next(error) : sendJson(res, answer(route.handler, req.platformAuth))));
      });
    }
    return { listener: app, ready: () => platform.platform.ready() };
  }

  const app = express();
  const platform = expressPlatform({ ...base, oauth: { ...oauth, authenticate: (req) => userOf(req.headers) } as OAuthOptions<express.Request> });
  app.use(platform);
  app.get(PING, platform.quota(), (req, res) => {
    res.json(answer('ping', req.platformAuth));
  });
  app.post(ORDERS, platform.quota(), (req, res) => {
    res.json(answer('orders', req.platformAuth));
  });
  app.get(encodeURI(ARGER), platform.quota(), (req, res) => {
    res.json(answer('ping', req.platformAuth));
  });
  app.get(QUERY_MARK, platform.quota(), (req, res) => {
    res.json(answer('ping', req.platformAuth));
  });
  // A parameterised route names its endpoint, so every id shares one quota.
  app.get(ORDER_ITEM, platform.quota(ORDER_ITEM), (req, res) => {
    res.json(answer('order', req.platformAuth));
  });
  return { listener: app, ready: () => platform.platform.ready() };
}

const running = new Set<QuotaHost>();

/** A listening host on 127.0.0.1; closed by `closeHosts()`. */
export async function startHost(adapter: AdapterName, setup: HostSetup): Promise<QuotaHost> {
  const clock = setup.clock ?? testClock();
  const handled: string[] = [];
  const { listener, ready } = await hostListener(adapter, setup, clock, handled);
  await ready();
  const server = await listen(listener);
  const host: QuotaHost = {
    adapter,
    origin: server.url,
    clock,
    handled,
    http: () => request(server.url),
    close: async () => {
      running.delete(host);
      await server.close();
    },
  };
  running.add(host);
  return host;
}

export async function closeHosts(): Promise<void> {
  await Promise.all([...running].map((host) => host.close()));
}

// ---------------------------------------------------------------------------------------------
// Tokens through the public surface

export interface Client {
  id: string;
  secret: string;
  redirectUri: string;
}

/** openid-client's RFC 6749 2.3.1 form encoding of a Basic user or password. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/(?:[-_.!~*'()]|%20)/g, (c) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${formEncode(id)}:${formEncode(secret)}`).toString('base64')}`;
}

function transactionOf(res: Response): string {
  const match = /<input type="hidden" name="transaction" value="([^"]*)">/.exec(res.text);
  expect(match, 'the consent page has a transaction field').not.toBeNull();
  return match![1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

/** authorize -> consent (when asked) -> the code on the callback. */
export async function authorizationCode(host: QuotaHost, client: Client, options: { user?: 'alice' | 'bob'; scope?: string } = {}): Promise<string> {
  const user = options.user ?? 'alice';
  const state = `st-${randomBytes(6).toString('hex')}`;
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: client.redirectUri, scope: options.scope ?? 'openid profile', state });
  let res = await host.http().get(`/oauth/authorize?${query}`).set('x-test-user', user);
  const consented = res.status === 200;
  if (consented) {
    res = await host
      .http()
      .post('/oauth/consent')
      .set({ 'content-type': 'application/x-www-form-urlencoded', 'x-test-user': user })
      .send(new URLSearchParams({ transaction: transactionOf(res), decision: 'approve' }).toString());
  }
  expect(res.status, `authorization ended with ${res.status}: ${res.text?.slice(0, 200)}`).toBe(consented ? 303 : 302);
  const callback = new URL(res.headers.location as string);
  expect(`${callback.origin}${callback.pathname}`).toBe(client.redirectUri);
  expect(callback.searchParams.get('state')).toBe(state);
  const code = callback.searchParams.get('code');
  expect(code, callback.searchParams.get('error_description') ?? '').toBeTruthy();
  return code!;
}

export function exchange(host: QuotaHost, client: Client, code: string): Promise<Response> {
  return host
    .http()
    .post('/oauth/token')
    .set({ 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.id, client.secret) })
    .send(new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri }).toString());
}

/** A live access token of `client` for `user`, plus the code it came from (replaying it revokes the grant). */
export async function accessToken(host: QuotaHost, client: Client, options: { user?: 'alice' | 'bob'; scope?: string } = {}): Promise<{ token: string; code: string }> {
  const code = await authorizationCode(host, client, options);
  const res = await exchange(host, client, code);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const token = (res.body as { access_token?: unknown }).access_token;
  expect(typeof token).toBe('string');
  return { token: token as string, code };
}

// ---------------------------------------------------------------------------------------------
// Calls

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export function ping(host: QuotaHost, token: string | undefined, path = PING): Promise<Response> {
  const req = host.http().get(path);
  return token === undefined ? req : req.set(bearer(token));
}

export function postOrder(host: QuotaHost, token: string | undefined, path = ORDERS): Promise<Response> {
  const req = host.http().post(path).send({ item: 'box' });
  return token === undefined ? req : req.set(bearer(token));
}

export interface PeriodEntry {
  period: string;
  limit: number;
  used: number;
  remaining: number;
  unlimited: boolean;
  reset_at: string;
}

export interface QuotaReportBody {
  code: number;
  message: string;
  data: { api_path: string; scope: string; cost: number; periods: PeriodEntry[] };
  time: string;
}

export function getQuota(host: QuotaHost, token: string | undefined, apiPath: string | undefined): Promise<Response> {
  const query = apiPath === undefined ? '' : `?${new URLSearchParams({ api_path: apiPath })}`;
  const req = host.http().get(`/openapi/v1/get_quota${query}`);
  return token === undefined ? req : req.set(bearer(token));
}

/** get_quota's body (asserted 200). */
export async function report(host: QuotaHost, token: string, apiPath: string): Promise<QuotaReportBody> {
  const res = await getQuota(host, token, apiPath);
  expect(res.status, res.text).toBe(200);
  return res.body as QuotaReportBody;
}

/** `used` per period (minute, day, month) as get_quota tells it. */
export async function usedOf(host: QuotaHost, token: string, apiPath: string): Promise<number[]> {
  return (await report(host, token, apiPath)).data.periods.map((p) => p.used);
}
