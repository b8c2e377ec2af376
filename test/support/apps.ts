import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import connect from 'connect';
import express from 'express';
import express4 from 'express4';
import Koa from 'koa';
import Koa2 from 'koa2';
import { bodyParser } from '@koa/bodyparser';
import { getRequestListener } from '@hono/node-server';
import Fastify from 'fastify';
import Fastify4 from 'fastify4';
import { Hono } from 'hono';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { courierPlatform as fastifyPlatform } from '../../adapters/fastify.js';
import { courierPlatform as fetchPlatform } from '../../adapters/fetch.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { readText } from './net.js';

export interface HostOptions {
  /** Mount the host's own JSON body parser before the platform. */
  hostParser?: boolean;
}

export interface Adapter {
  readonly name: string;
  /**
   * A host app with the platform mounted, as a Node request listener (Koa: `app.callback()`).
   * These suites test the courier proxy: the OAuth and quota parts are switched off unless
   * `options` mentions them, so they neither add warnings to captured logs nor generate keys.
   */
  build(options: CourierPlatformOptions, host?: HostOptions): RequestListener;
}

function courierOnly(options: CourierPlatformOptions): CourierPlatformOptions {
  const off: CourierPlatformOptions = {};
  if (!Object.hasOwn(options, 'oauth')) off.oauth = false;
  if (!Object.hasOwn(options, 'quota')) off.quota = false;
  return { ...off, ...options };
}

export const HELLO = 'hello from host';

type BodyRequest = IncomingMessage & { body?: unknown };

/**
 * The host's echo route reads the stream itself when no host parser ran: if the platform had
 * consumed the body on its way through, the route answers 500 instead of hanging.
 */
async function ownJsonBody(req: BodyRequest): Promise<unknown> {
  if (req.body !== undefined && req.readableEnded) return req.body;
  if (req.readableEnded) throw new Error('the request stream was already consumed');
  const text = await readText(req);
  return text ? (JSON.parse(text) as unknown) : undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

/** Host routes for Express and Connect: they see Node's own req/res. */
function nodeHostRoutes(req: BodyRequest, res: ServerResponse, next: (error?: unknown) => void): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/host/hello') {
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(HELLO);
    return;
  }
  if (req.method === 'POST' && path === '/host/echo') {
    ownJsonBody(req).then(
      (body) => sendJson(res, 200, { echoed: body }),
      (error: Error) => sendJson(res, 500, { hostError: error.message }),
    );
    return;
  }
  next();
}

/** A deliberately small host JSON parser for Connect: sets req.body and consumes the stream. */
export function tinyJsonParser(req: BodyRequest, res: ServerResponse, next: (error?: unknown) => void): void {
  const type = req.headers['content-type'] ?? '';
  if (req.method !== 'POST' || !/^application\/json\b/i.test(type)) {
    next();
    return;
  }
  readText(req).then((text) => {
    try {
      req.body = text ? (JSON.parse(text) as unknown) : {};
    } catch {
      sendJson(res, 400, { hostError: 'bad json' });
      return;
    }
    next();
  }, next);
}

type KoaApp = InstanceType<typeof Koa>;

function koaApp(app: KoaApp, options: CourierPlatformOptions, host: HostOptions): RequestListener {
  app.silent = true;
  if (host.hostParser) app.use(bodyParser());
  app.use(koaPlatform(courierOnly(options)));
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/host/hello') {
      ctx.type = 'text/plain';
      ctx.body = HELLO;
      return;
    }
    if (ctx.method === 'POST' && ctx.path === '/host/echo') {
      const parsed = (ctx.request as { body?: unknown }).body;
      try {
        ctx.body = { echoed: host.hostParser ? parsed : await ownJsonBody(ctx.req) };
      } catch (error) {
        ctx.status = 500;
        ctx.body = { hostError: (error as Error).message };
      }
      return;
    }
    await next();
  });
  return app.callback();
}

/** The smallest surface both Fastify majors share here: their instances differ in type only. */
interface FastifyApp {
  register(plugin: unknown): unknown;
  get(path: string, handler: (request: { body?: unknown }, reply: { type(value: string): unknown }) => unknown): unknown;
  post(path: string, handler: (request: { body?: unknown }) => unknown): unknown;
  ready(): PromiseLike<unknown>;
  routing(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * A Fastify app as a Node listener; requests wait for `ready()`. Fastify parses JSON bodies
 * itself, so the host parser is always on; the plugin's own parsers take the platform's paths.
 */
export function fastifyListener(app: FastifyApp): RequestListener {
  const ready = Promise.resolve(app.ready());
  return (req, res) => {
    ready.then(
      () => app.routing(req, res),
      (error: Error) => sendJson(res, 500, { hostError: error.message }),
    );
  };
}

function fastifyApp(app: FastifyApp, options: CourierPlatformOptions): RequestListener {
  app.register(fastifyPlatform(courierOnly(options)));
  app.get('/host/hello', (_request, reply) => {
    reply.type('text/plain; charset=utf-8');
    return HELLO;
  });
  app.post('/host/echo', (request) => ({ echoed: request.body }));
  return fastifyListener(app);
}

/** The fetch host's own routes, after the platform's handler gave `undefined`. */
async function fetchHostRoutes(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (request.method === 'GET' && path === '/host/hello') return new Response(HELLO, { headers: { 'content-type': 'text/plain; charset=utf-8' } });
  if (request.method === 'POST' && path === '/host/echo') {
    try {
      const text = await request.text();
      return Response.json({ echoed: text ? (JSON.parse(text) as unknown) : undefined });
    } catch (error) {
      return Response.json({ hostError: (error as Error).message }, { status: 500 });
    }
  }
  return new Response('Not found', { status: 404 });
}

function honoApp(options: CourierPlatformOptions, host: HostOptions): RequestListener {
  const app = new Hono();
  if (host.hostParser) {
    // Reads JSON bodies before the platform, as a validator middleware would; Hono caches them.
    app.use(async (c, next) => {
      if (c.req.method === 'POST' && /^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
        try {
          await c.req.json();
        } catch {
          return c.json({ hostError: 'bad json' }, 400);
        }
      }
      await next();
    });
  }
  app.use(honoPlatform(courierOnly(options)));
  app.get('/host/hello', (c) => c.text(HELLO));
  app.post('/host/echo', async (c) => {
    try {
      return c.json({ echoed: await c.req.json() });
    } catch (error) {
      return c.json({ hostError: (error as Error).message }, 500);
    }
  });
  return getRequestListener(app.fetch);
}

export const ADAPTERS: readonly Adapter[] = [
  {
    name: 'express 5',
    build(options, host = {}) {
      const app = express();
      if (host.hostParser) app.use(express.json());
      app.use(expressPlatform(courierOnly(options)));
      app.use(nodeHostRoutes);
      return app;
    },
  },
  {
    name: 'express 4',
    build(options, host = {}) {
      const app = express4();
      if (host.hostParser) app.use(express4.json());
      app.use(expressPlatform(courierOnly(options)));
      app.use(nodeHostRoutes);
      return app;
    },
  },
  {
    name: 'koa 3',
    build: (options, host = {}) => koaApp(new Koa(), options, host),
  },
  {
    name: 'koa 2',
    build: (options, host = {}) => koaApp(new Koa2(), options, host),
  },
  {
    name: 'connect',
    build(options, host = {}) {
      const app = connect();
      if (host.hostParser) app.use(tinyJsonParser);
      app.use(connectPlatform(courierOnly(options)));
      app.use(nodeHostRoutes);
      return app;
    },
  },
  {
    name: 'fastify 5',
    build: (options) => fastifyApp(Fastify() as unknown as FastifyApp, options),
  },
  {
    name: 'fastify 4',
    build: (options) => fastifyApp(Fastify4() as unknown as FastifyApp, options),
  },
  {
    name: 'hono',
    build: (options, host = {}) => honoApp(options, host),
  },
  {
    // A fetch host has no body parser of its own: the handler reads the Request's stream.
    name: 'fetch',
    build(options) {
      const platform = fetchPlatform(courierOnly(options));
      return getRequestListener(async (request, env) => (await platform(request, env)) ?? fetchHostRoutes(request));
    },
  },
];
