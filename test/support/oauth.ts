/**
 * A host app for OAuth tests on any adapter. The "session" is a request header, `x-test-user`
 * (a user name of USERS), optionally with `x-test-auth-time` (seconds): the host owns sessions,
 * so the platform only ever sees what `authenticate` returns.
 */
import { randomBytes, scrypt } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import connect from 'connect';
import express from 'express';
import Koa from 'koa';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { getRequestListener } from '@hono/node-server';
import Fastify, { type FastifyRequest } from 'fastify';
import { Hono, type Context } from 'hono';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as fastifyPlatform } from '../../adapters/fastify.js';
import { courierPlatform as fetchPlatform } from '../../adapters/fetch.js';
import { courierPlatform as honoPlatform } from '../../adapters/hono.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import type { Platform } from '../../src/platform.js';
import type { OAuthClientConfig, OAuthOptions, OAuthUser } from '../../src/oauth/options.js';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { fastifyListener } from './apps.js';
import { serve } from './net.js';

export const USERS: Record<string, OAuthUser> = {
  alice: { sub: 'user-alice', name: 'Alice Liddell', preferred_username: 'alice', email: 'alice@example.com', email_verified: true },
  bob: { sub: 'user-bob', name: 'Bob Builder', preferred_username: 'bob', email: 'bob@example.com', email_verified: false },
};

export const CONFIDENTIAL = { id: 'rp-client', name: 'Relying Party', secret: 'rp-secret-1234', redirectUri: 'http://127.0.0.1:9/callback' };
export const OTHER = { id: 'other-client', name: 'Other App', secret: 'other-secret-1234', redirectUri: 'http://127.0.0.1:9/other' };
export const PUBLIC = { id: 'spa-client', name: 'Single Page App', redirectUri: 'http://127.0.0.1:9/spa' };
/** A confidential client that may also act on its own behalf (client_credentials) and introspect any token. */
export const SERVICE = { id: 'service-client', name: 'Back Office', secret: 'service-secret-1234', redirectUri: 'http://127.0.0.1:9/service' };
/** A secret with characters that RFC 6749 2.3.1 form-encoding changes (openid-client encodes them). */
export const ENCODED = { id: 'enc:odd/client', name: 'Odd Client', secret: 'p@ss w:rd/+%&=', redirectUri: 'http://127.0.0.1:9/enc' };

function userOf(headers: IncomingMessage['headers']): OAuthUser | null {
  const name = headers['x-test-user'];
  if (typeof name !== 'string' || !USERS[name]) return null;
  const authTime = headers['x-test-auth-time'];
  return typeof authTime === 'string' ? { ...USERS[name], auth_time: Number(authTime) } : USERS[name];
}

export function oauthTestOptions(overrides: Partial<OAuthOptions> = {}): OAuthOptions {
  return {
    clients: [
      { id: CONFIDENTIAL.id, name: CONFIDENTIAL.name, secret: CONFIDENTIAL.secret, redirectUris: [CONFIDENTIAL.redirectUri] },
      { id: OTHER.id, name: OTHER.name, secret: OTHER.secret, redirectUris: [OTHER.redirectUri] },
      { id: PUBLIC.id, name: PUBLIC.name, public: true, redirectUris: [PUBLIC.redirectUri] },
      { id: ENCODED.id, name: ENCODED.name, secret: ENCODED.secret, redirectUris: [ENCODED.redirectUri] },
      {
        id: SERVICE.id,
        name: SERVICE.name,
        secret: SERVICE.secret,
        redirectUris: [SERVICE.redirectUri],
        scopes: ['openid', 'profile', 'email', 'offline_access'],
        grants: ['authorization_code', 'refresh_token', 'client_credentials'],
        introspect: true,
      },
    ],
    ...overrides,
  };
}

export type AdapterName = 'express' | 'koa' | 'connect' | 'fastify' | 'hono' | 'fetch';
export const ADAPTER_NAMES: AdapterName[] = ['express', 'koa', 'connect', 'fastify', 'hono', 'fetch'];

/** A fetch Request's headers as Node spells them, for `userOf`. */
const nodeHeaders = (headers: Headers): IncomingMessage['headers'] => Object.fromEntries(headers);

export interface OAuthTestHost {
  /** A Node request listener, for supertest or a real server. */
  listener: (req: IncomingMessage, res: import('node:http').ServerResponse) => void;
  ready(): Promise<void>;
  /** The platform object the adapter exposes as `.platform`. */
  platform: Platform;
}

/**
 * Builds a host app on the given adapter with the platform mounted. `authenticate` reads the test
 * session header unless the options bring their own.
 */
export function oauthHost(adapter: AdapterName, oauth: OAuthOptions, rest: Omit<CourierPlatformOptions, 'oauth'> = {}, logger: Logger = silentLogger): OAuthTestHost {
  const base = { courier: false as const, logger, ...rest };
  if (adapter === 'koa') {
    const app = new Koa();
    const mw = koaPlatform({ ...base, oauth: { authenticate: (ctx) => userOf(ctx.req.headers), ...oauth } as OAuthOptions<Koa.Context> });
    app.use(mw);
    return { listener: app.callback(), ready: () => mw.platform.ready(), platform: mw.platform };
  }
  if (adapter === 'fastify') {
    const app = Fastify();
    const plugin = fastifyPlatform({ ...base, oauth: { authenticate: (req) => userOf(req.headers), ...oauth } as OAuthOptions<FastifyRequest> });
    app.register(plugin);
    return { listener: fastifyListener(app as never), ready: () => plugin.platform.ready(), platform: plugin.platform };
  }
  if (adapter === 'hono') {
    const app = new Hono();
    const mw = honoPlatform({ ...base, oauth: { authenticate: (c) => userOf(nodeHeaders(c.req.raw.headers)), ...oauth } as OAuthOptions<Context> });
    app.use(mw);
    return { listener: getRequestListener(app.fetch), ready: () => mw.platform.ready(), platform: mw.platform };
  }
  if (adapter === 'fetch') {
    const handler = fetchPlatform({ ...base, oauth: { authenticate: (req) => userOf(nodeHeaders(req.headers)), ...oauth } as OAuthOptions<Request> });
    const listener = getRequestListener(async (req, env) => (await handler(req, env)) ?? new Response('Not found', { status: 404 }));
    return { listener, ready: () => handler.platform.ready(), platform: handler.platform };
  }
  if (adapter === 'connect') {
    const app = connect();
    const mw = connectPlatform({ ...base, oauth: { authenticate: (req) => userOf(req.headers), ...oauth } as OAuthOptions<IncomingMessage> });
    app.use(mw);
    return { listener: app, ready: () => mw.platform.ready(), platform: mw.platform };
  }
  const app = express();
  const mw = expressPlatform({ ...base, oauth: { authenticate: (req) => userOf(req.headers), ...oauth } as OAuthOptions<express.Request> });
  app.use(mw);
  return { listener: app, ready: () => mw.platform.ready(), platform: mw.platform };
}

/** Listens on 127.0.0.1 and a free port; `url` is its origin. */
export const listen = serve;

/** A private RSA JWK with a kid, as an operator would configure `signingKeys`. */
export async function rsaSigningKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  return { ...(await exportJWK(privateKey)), kid };
}

let sharedKey: Promise<JWK> | undefined;
/** One signing key per test file: generating RSA keys is the slow part of starting a host. */
export function sharedSigningKey(): Promise<JWK> {
  sharedKey ??= rsaSigningKey('test-key');
  return sharedKey;
}

/**
 * A `hashClientSecret`-format hash with cheap scrypt parameters: verification reads N, r and p
 * from the hash, so client authentication runs the real code at a fraction of the cost.
 */
function cheapSecretHash(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const params = { N: 256, r: 8, p: 1 };
  return new Promise((resolve, reject) =>
    scrypt(secret.normalize('NFC'), salt, 32, params, (error, key) =>
      error ? reject(error) : resolve(['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$')),
    ),
  );
}

let hashedClients: Promise<OAuthClientConfig[]> | undefined;
/** The harness's clients with their secrets pre-hashed, so starting a host costs no scrypt. */
export function cheapClients(): Promise<OAuthClientConfig[]> {
  hashedClients ??= Promise.all(
    (oauthTestOptions().clients ?? []).map(async ({ secret, ...client }) => (secret === undefined ? client : { ...client, secretHash: await cheapSecretHash(secret) })),
  );
  return hashedClients;
}
