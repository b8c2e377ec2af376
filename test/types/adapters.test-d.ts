import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Context, Middleware } from 'koa';
import { describe, expectTypeOf, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { silentLogger } from '../../src/core/logger.js';
import type { QuotaIdentity } from '../../src/quota/index.js';

// Built once, with a fixed logger; what matters here is what the compiler accepts.
const quiet = { logger: silentLogger, courier: false as const };

describe('types users see first', () => {
  it('authenticate receives each framework its own request type', () => {
    expressPlatform({ ...quiet, oauth: { authenticate: (req) => (expectTypeOf(req).toEqualTypeOf<Request>(), null) } });
    koaPlatform({ ...quiet, oauth: { authenticate: (ctx) => (expectTypeOf(ctx).toEqualTypeOf<Context>(), null) } });
    connectPlatform({ ...quiet, oauth: { authenticate: (req) => (expectTypeOf(req).toEqualTypeOf<IncomingMessage>(), null) } });
  });

  it('quota() is middleware of the framework, and Express requests carry platformAuth', () => {
    const express = expressPlatform(quiet);
    expectTypeOf(express.quota()).toExtend<RequestHandler>();
    expectTypeOf(koaPlatform(quiet).quota('/openapi/v1/orders/:id')).toExtend<Middleware>();
    expectTypeOf<Request['platformAuth']>().toEqualTypeOf<QuotaIdentity | undefined>();
  });

  it('misspelt or mistyped options do not compile', () => {
    // @ts-expect-error: unknown top-level option
    expectTypeOf(expressPlatform).toBeCallableWith({ courer: {} });
    // @ts-expect-error: signer is 'md5' | 'hmac-sha256' | function
    expectTypeOf(expressPlatform).toBeCallableWith({ courier: { signer: 'sha1' } });
    // @ts-expect-error: onStoreError is 'open' | 'closed'
    expectTypeOf(koaPlatform).toBeCallableWith({ quota: { onStoreError: 'ignore' } });
  });
});
