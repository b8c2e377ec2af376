/**
 * Two ways of mounting the platform that look right and are not, each answered with what to write
 * instead: the factory handed to `app.use()` without being called, and an `oauth.publicUrl`
 * without the path the platform is mounted under (discovery would advertise 404s).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import connect from 'connect';
import express from 'express';
import express4 from 'express4';
import Koa from 'koa';
import mount from 'koa-mount';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
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
