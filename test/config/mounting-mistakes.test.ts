/**
 * Two ways of mounting the platform that look right and are not, each answered with what to write
 * instead: the factory handed to `app.use()` (or to a fetch server) without being called, and an `oauth.publicUrl`
 * without the path the platform is mounted under (discovery would advertise 404s).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import connect from 'connect';
import express from 'express';
import express4 from 'express4';
import { Hono, type MiddlewareHandler } from 'hono';
import Koa from 'koa';
import mount from 'koa-mount';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as fetchPlatform } from '../../adapters/fetch.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { capturingLogger } from '../support/logger.js';
import { cheapClients, sharedSigningKey } from '../support/oauth.js';

/** The host's own error handler, as most apps have one: it shows the error's message. */
function showError(error: Error, _req: IncomingMessage, res: ServerResponse, _next: unknown): void {
  res.statusCode = 500;
  res.end(error.message);
}

/** `app.use(courierPlatform)`, exactly as a user writes it (the compiler accepts it). */
const UNCALLED: [string, () => RequestListener][] = [
  [
    'express 5',
    () => {
      const app = express();
      app.use(expressPlatform);
      app.use(showError);
      return app;
    },
  ],
  [
    'express 4',
    () => {
      const app = express4();
      app.use(expressPlatform);
      app.use(showError);
      return app;
    },
  ],
  [
    'koa',
    () => {
      const app = new Koa();
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          ctx.status = 500;
          ctx.body = (error as Error).message;
        }
      });
      app.use(koaPlatform);
      return app.callback();
    },
  ],
  [
    'connect',
    () => {
      const app = connect();
      app.use(connectPlatform);
      app.use(showError);
      return app;
    },
  ],
  [
    'hono (@hono/node-server)',
    () => {
      const app = new Hono();
      app.onError((error, c) => c.text(error.message, 500));
      // TypeScript refuses this one; a JavaScript host writes it.
      app.use(honoPlatform as unknown as MiddlewareHandler);
      return getRequestListener(app.fetch);
    },
  ],
];

describe.each(UNCALLED)('app.use(courierPlatform) without the call, on %s', (_, build) => {
  it('answers with the line to write, app.use(courierPlatform()), instead of a list of request fields', async () => {
    const res = await request(build()).get('/oauth/.well-known/openid-configuration');
    expect(res.status).toBe(500);
    expect(res.text).toContain('write app.use(courierPlatform())');
    expect(res.text).toContain('mounted without being called');
    expect(res.text).not.toContain('is not an option');
  });
});

describe('the fetch handler passed to a server without the call', () => {
  it('fails each request with the lines to write, not a list of Request fields', async () => {
    // `Bun.serve({ fetch: courierPlatform })`, `serve({ fetch: courierPlatform })`: the server calls it with a request.
    const serve = { fetch: fetchPlatform as unknown as (request: Request, info?: unknown) => Promise<Response | undefined> };
    const failure = await Promise.resolve()
      .then(() => serve.fetch(new Request('http://127.0.0.1/oauth/.well-known/openid-configuration'), {}))
      .then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    expect(failure?.message).toContain('is a fetch Request: courierPlatform was mounted without being called');
    expect(failure?.message).toContain('const platform = courierPlatform()');
    expect(failure?.message).toContain('await platform(request, info)');
    expect(failure?.message).not.toContain('is not an option');
  });
});

const MOUNTED: [string, (options: CourierPlatformOptions) => RequestListener][] = [
  [
    'express',
    (options) => {
      const app = express();
      app.use('/api', expressPlatform(options as CourierPlatformOptions<express.Request>));
      return app;
    },
  ],
  [
    'koa (koa-mount)',
    (options) => {
      const app = new Koa();
      app.use(mount('/api', koaPlatform(options as CourierPlatformOptions<Koa.Context>)));
      return app.callback();
    },
  ],
  [
    'connect',
    (options) => {
      const app = connect();
      app.use('/api', connectPlatform(options as CourierPlatformOptions<IncomingMessage>));
      return app;
    },
  ],
];

describe.each(MOUNTED)('mounted under /api on %s', (_, build) => {
  async function host(publicUrl: string) {
    const logger = capturingLogger();
    const listener = build({
      courier: false,
      quota: false,
      logger,
      oauth: { publicUrl, clients: await cheapClients(), signingKeys: [await sharedSigningKey()], authenticate: () => null },
    });
    const warnings = () => logger.records.filter((record) => record.level === 'warn' && record.message.includes('/api, the path the platform is mounted under'));
    return { listener, warnings };
  }

  it('with an oauth.publicUrl that lacks /api, warns once, naming oauth.publicUrl, the prefix and the URL to set', async () => {
    const { listener, warnings } = await host('https://auth.example.com');
    const discovery = await request(listener).get('/api/oauth/.well-known/openid-configuration');
    // What the warning is about: the advertised endpoint is not where the platform answers.
    expect(discovery.body.token_endpoint).toBe('https://auth.example.com/oauth/token');
    await request(listener).get('/api/oauth/jwks');
    await request(listener).get('/api/oauth/.well-known/openid-configuration');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]!.message).toContain('oauth.publicUrl (https://auth.example.com) does not end with /api');
    expect(warnings()[0]!.message).toContain('set oauth.publicUrl to https://auth.example.com/api');
  });

  it('with an oauth.publicUrl that ends with /api, says nothing', async () => {
    const { listener, warnings } = await host('https://example.com/api');
    const discovery = await request(listener).get('/api/oauth/.well-known/openid-configuration');
    expect(discovery.body.token_endpoint).toBe('https://example.com/api/oauth/token');
    expect(warnings()).toEqual([]);
  });
});
