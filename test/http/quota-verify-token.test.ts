/**
 * A host without the OAuth part (`oauth: false`) identifies applications itself with
 * `quota.verifyToken`, answering at once or with a promise (README, options table). Through HTTP
 * on the three adapters: 401 for what it refuses, the identity handed to the host's handler,
 * the quota counted per application, and a failing check reaching the host's own error handling.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import connect from 'connect';
import express from 'express';
import express4 from 'express4';
import Koa from 'koa';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { silentLogger } from '../../src/core/logger.js';
import type { QuotaIdentity } from '../../src/quota/index.js';
import type { TokenVerifier } from '../../src/guard/guard.js';
import { ADAPTER_NAMES, type AdapterName } from '../support/oauth.js';
import { serve, type Served } from '../support/net.js';

const PING = '/openapi/v1/ping';
const IDENTITIES: Record<string, QuotaIdentity> = {
  'token-of-shop': { clientId: 'shop', sub: 'merchant-1', scope: ['orders'] },
  'token-of-crm': { clientId: 'crm', scope: [] },
};
const BROKEN = 'token-that-breaks-the-check';
/** The check fails with `undefined`: to `next()` that would read as "no error". */
const BROKEN_SILENTLY = 'token-that-throws-nothing';

function check(token: string): QuotaIdentity | undefined {
  if (token === BROKEN) throw new Error('identity service misconfigured');
  if (token === BROKEN_SILENTLY) throw undefined;
  return IDENTITIES[token];
}

const verifiers: Record<'synchronous' | 'asynchronous', TokenVerifier> = {
  synchronous: check,
  asynchronous: async (token) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return check(token);
  },
};

/** Half a minute into a minute: the tests' calls all count in one minute, however slow the machine. */
const MID_MINUTE = Date.UTC(2026, 0, 15, 12, 0, 30);

function platformOptions(verifyToken: TokenVerifier) {
  return { courier: false as const, oauth: false as const, quota: { verifyToken, defaults: { minute: 2 } }, logger: silentLogger, now: () => MID_MINUTE };
}

/** The host answers `{ platformAuth }` from its handler and `{ hostError }` (HTTP 418) from its own error handling. */
function hostApp(adapter: AdapterName, verifyToken: TokenVerifier) {
  const hostError = (error: unknown) => ({ hostError: (error as Error).message });
  if (adapter === 'koa') {
    const app = new Koa();
    app.silent = true;
    const platform = koaPlatform(platformOptions(verifyToken));
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        ctx.status = 418;
        ctx.body = hostError(error);
      }
    });
    app.use(platform);
    const guard = platform.quota();
    app.use(async (ctx, next) => {
      if (ctx.path !== PING) return next();
      await guard(ctx, async () => {
        ctx.body = { platformAuth: ctx.state.platformAuth };
      });
    });
    return app.callback();
  }
  if (adapter === 'connect') {
    const app = connect();
    const platform = connectPlatform(platformOptions(verifyToken));
    app.use(platform);
    const guard = platform.quota();
    app.use(PING, (req: IncomingMessage & { platformAuth?: QuotaIdentity }, res: ServerResponse, next: (error?: unknown) => void) => {
      guard(req, res, (error?: unknown) => {
        if (error) return next(error);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ platformAuth: req.platformAuth }));
      });
    });
    app.use((error: unknown, _req: IncomingMessage, res: ServerResponse, _next: (error?: unknown) => void) => {
      res.statusCode = 418;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(hostError(error)));
    });
    return app;
  }
  const app = express();
  const platform = expressPlatform(platformOptions(verifyToken));
  app.use(platform);
  app.get(PING, platform.quota(), (req, res) => {
    res.json({ platformAuth: req.platformAuth });
  });
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(418).json(hostError(error));
  });
  return app;
}

const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe.each(ADAPTER_NAMES)('quota.verifyToken on %s (oauth: false)', (adapter) => {
  describe.each(['synchronous', 'asynchronous'] as const)('a %s check', (kind) => {
    async function host() {
      const server = await serve(hostApp(adapter, verifiers[kind]) as Parameters<typeof serve>[0]);
      servers.push(server);
      return (token?: string) => {
        const call = request(server.url).get(PING);
        return token ? call.set('authorization', `Bearer ${token}`) : call;
      };
    }

    it('RFC 6750 3.1: 401 with the challenge alone for no token, invalid_token for a token the check refuses', async () => {
      const get = await host();
      const [none, refused] = [await get(), await get('unknown-token')];
      for (const res of [none, refused]) {
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ code: 1 });
      }
      expect(none.headers['www-authenticate']).toBe('Bearer realm="openapi"');
      expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    });

    it("hands the check's identity to the host's handler and counts per application", async () => {
      const get = await host();
      const first = await get('token-of-shop');
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ platformAuth: IDENTITIES['token-of-shop'] });
      expect(first.headers.ratelimit).toMatch(/^"minute";r=1;t=\d+, "day";r=999;t=\d+$/);
      expect((await get('token-of-shop')).status).toBe(200);
      expect((await get('token-of-shop')).status).toBe(429);
      // Another application has its own counters.
      const other = await get('token-of-crm');
      expect(other.status).toBe(200);
      expect(other.body).toEqual({ platformAuth: IDENTITIES['token-of-crm'] });
    });

    it('a check that fails answers 503 with the envelope, never the handler or the host error page (docs/deployment.md)', async () => {
      const get = await host();
      for (const path of [BROKEN, BROKEN_SILENTLY]) {
        const res = await get(path);
        expect(res.status).toBe(503);
        expect(res.body).toMatchObject({ code: 1 });
        expect(res.body).not.toHaveProperty('hostError');
      }
    });
  });
});

describe('the Express and Connect guard with in-process checks and memory counters', () => {
  it("runs the host's next() before the middleware returns; with an asynchronous check, afterwards", async () => {
    for (const [kind, inTick] of [['synchronous', true], ['asynchronous', false]] as const) {
      const platform = expressPlatform(platformOptions(verifiers[kind]));
      const req = { method: 'GET', url: PING, headers: { authorization: 'Bearer token-of-shop' } } as unknown as express.Request;
      const headers: Record<string, string> = {};
      const res = { setHeader: (name: string, value: string) => void (headers[name] = value) } as unknown as express.Response;
      let returned = false;
      const called = new Promise<boolean>((resolve, reject) => {
        platform.quota()(req, res, (error?: unknown) => (error ? reject(error) : resolve(!returned)));
      });
      returned = true;
      expect(await called, kind).toBe(inTick);
      expect(req.platformAuth, kind).toEqual(IDENTITIES['token-of-shop']);
      expect(headers.ratelimit, kind).toMatch(/^"minute";r=1;/);
    }
  });
});

describe.each(['express', 'connect'] as const)('req.platformAuth on %s, outside the guard', (adapter) => {
  type Req = IncomingMessage & { platformAuth?: QuotaIdentity };
  const hostIdentity = (req: Req, _res: ServerResponse, next: () => void) => {
    if (req.headers['x-host-identity']) req.platformAuth = { clientId: String(req.headers['x-host-identity']), scope: [] };
    next();
  };
  const open = (req: Req, res: ServerResponse) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ own: Object.hasOwn(req, 'platformAuth'), platformAuth: req.platformAuth ?? null }));
  };
  function hostWithOpenRoute(): Parameters<typeof serve>[0] {
    if (adapter === 'express') {
      const app = express();
      app.use(hostIdentity, expressPlatform(platformOptions(check)));
      app.use('/open', open);
      return app;
    }
    const app = connect();
    app.use(hostIdentity);
    app.use(connectPlatform(platformOptions(check)));
    app.use('/open', open);
    return app;
  }

  // Requests outside the platform's paths go on untouched: the mount adds nothing and never clobbers a value.
  it('is not there on an unguarded route, and the mount keeps what the host set before it', async () => {
    const server = await serve(hostWithOpenRoute());
    servers.push(server);
    expect((await request(server.url).get('/open')).body).toEqual({ own: false, platformAuth: null });
    const kept = await request(server.url).get('/open').set('x-host-identity', 'host-app');
    expect(kept.body.platformAuth).toEqual({ clientId: 'host-app', scope: [] });
  });
});

describe('the identity in the handler, through the guard', () => {
  const shop = IDENTITIES['token-of-shop'];
  type Req = IncomingMessage & { platformAuth?: QuotaIdentity };
  const hostValue = (headers: IncomingMessage['headers']): QuotaIdentity | undefined =>
    headers['x-host-identity'] ? { clientId: String(headers['x-host-identity']), scope: [] } : undefined;
  const sendJson = (res: ServerResponse, body: unknown) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  };

  /** A host whose own middleware may set an identity before the guard runs. */
  const hosts: Array<[string, () => Parameters<typeof serve>[0]]> = [
    ...([
      ['express 5', express],
      ['express 4', express4],
    ] as const).map(([name, createApp]): [string, () => Parameters<typeof serve>[0]] => [
      `req.platformAuth on ${name}`,
      () => {
        const app = createApp();
        const platform = expressPlatform(platformOptions(check));
        app.use((req, _res, next) => {
          const value = hostValue(req.headers);
          if (value) req.platformAuth = value;
          next();
        });
        app.use(platform);
        app.get(PING, platform.quota(), (req, res) => {
          res.json({ platformAuth: req.platformAuth });
        });
        return app;
      },
    ]),
    [
      'req.platformAuth on connect',
      () => {
        const app = connect();
        const platform = connectPlatform(platformOptions(check));
        app.use((req: Req, _res: ServerResponse, next: () => void) => {
          const value = hostValue(req.headers);
          if (value) req.platformAuth = value;
          next();
        });
        app.use(platform);
        const guard = platform.quota();
        app.use(PING, (req: Req, res: ServerResponse, next: (error?: unknown) => void) => {
          guard(req, res, (error?: unknown) => (error ? next(error) : sendJson(res, { platformAuth: req.platformAuth })));
        });
        return app;
      },
    ],
    [
      'ctx.state.platformAuth on koa',
      () => {
        const app = new Koa();
        const platform = koaPlatform(platformOptions(check));
        app.use(async (ctx, next) => {
          const value = hostValue(ctx.headers);
          if (value) ctx.state.platformAuth = value;
          await next();
        });
        app.use(platform);
        const guard = platform.quota();
        app.use(async (ctx, next) => {
          if (ctx.path !== PING) return next();
          await guard(ctx, async () => {
            ctx.body = { platformAuth: ctx.state.platformAuth };
          });
        });
        return app.callback();
      },
    ],
  ];

  it.each(hosts)("%s is the guard's identity, replacing a value the host set before it", async (_name, build) => {
    const server = await serve(build());
    servers.push(server);
    const plain = await request(server.url).get(PING).set('authorization', 'Bearer token-of-shop');
    expect(plain.body).toEqual({ platformAuth: shop });
    const replaced = await request(server.url).get(PING).set('authorization', 'Bearer token-of-crm').set('x-host-identity', 'host-app');
    expect(replaced.body).toEqual({ platformAuth: IDENTITIES['token-of-crm'] });
  });
});
