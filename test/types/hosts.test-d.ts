import type { FastifyRequest, onRequestHookHandler, preHandlerHookHandler } from 'fastify';
import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { describe, expectTypeOf, it } from 'vitest';
import { courierPlatform as fastifyPlatform } from '../../adapters/fastify.js';
import { courierPlatform as fetchPlatform, type FetchGuardResult } from '../../adapters/fetch.js';
import { courierPlatform as honoPlatform, type PlatformEnv } from '../../adapters/hono.js';
import { silentLogger } from '../../src/core/logger.js';
import type { QuotaIdentity } from '../../src/quota/index.js';

const quiet = { logger: silentLogger, courier: false as const };

describe('types of the Fastify, Hono and fetch entries', () => {
  it('authenticate receives each host its own request type', () => {
    fastifyPlatform({ ...quiet, oauth: { authenticate: (request) => (expectTypeOf(request).toEqualTypeOf<FastifyRequest>(), null) } });
    honoPlatform({ ...quiet, oauth: { authenticate: (c) => (expectTypeOf(c).toEqualTypeOf<Context>(), null) } });
    fetchPlatform({ ...quiet, oauth: { authenticate: (request) => (expectTypeOf(request).toEqualTypeOf<Request>(), null) } });
  });

  it('Fastify: quota() is an onRequest and a preHandler hook, and requests carry platformAuth', () => {
    const platform = fastifyPlatform(quiet);
    expectTypeOf(platform.quota()).toExtend<preHandlerHookHandler>();
    expectTypeOf(platform.quota('/openapi/v1/orders/:id')).toExtend<onRequestHookHandler>();
    expectTypeOf<FastifyRequest['platformAuth']>().toEqualTypeOf<QuotaIdentity | undefined>();
  });

  it("Hono: quota() is middleware and c.get('platformAuth') is the caller, with or without PlatformEnv", () => {
    const platform = honoPlatform(quiet);
    expectTypeOf(platform).toExtend<MiddlewareHandler>();
    new Hono().get('/a', platform.quota(), (c) => (expectTypeOf(c.get('platformAuth')).toEqualTypeOf<QuotaIdentity>(), c.text('a')));
    new Hono<PlatformEnv>().get('/b', platform.quota(), (c) => (expectTypeOf(c.var.platformAuth).toEqualTypeOf<QuotaIdentity>(), c.text('b')));
  });

  it('fetch: the handler may give undefined, the guard a response or the caller', () => {
    const platform = fetchPlatform(quiet);
    expectTypeOf(platform).returns.toEqualTypeOf<Promise<Response | undefined>>();
    expectTypeOf(platform.quota()).returns.toEqualTypeOf<Promise<FetchGuardResult>>();
    expectTypeOf<Extract<FetchGuardResult, { pass: true }>['identity']>().toEqualTypeOf<QuotaIdentity>();
  });
});
