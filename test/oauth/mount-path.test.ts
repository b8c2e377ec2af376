/**
 * Mounted under a path (`app.use('/api', courierPlatform())`) and without `oauth.publicUrl`, the
 * issuer and every endpoint in discovery (OIDC Discovery 1.0 section 3) carry the mount path, so
 * a relying party that follows them reaches the platform rather than the host's 404.
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import connect from 'connect';
import express from 'express';
import Koa from 'koa';
import mount from 'koa-mount';
import { afterEach, describe, expect, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { silentLogger } from '../../src/core/logger.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { CONFIDENTIAL, USERS, cheapClients, listen, sharedSigningKey } from '../support/oauth.js';
import type { Served } from '../support/net.js';

const MOUNTS: [string, (options: CourierPlatformOptions) => { listener: RequestListener; ready(): Promise<void> }][] = [
  [
    'express',
    (options) => {
      const mw = expressPlatform(options as CourierPlatformOptions<express.Request>);
      const app = express();
      app.use('/api', mw);
      return { listener: app, ready: () => mw.platform.ready() };
    },
  ],
  [
    'koa (koa-mount)',
    (options) => {
      const mw = koaPlatform(options as CourierPlatformOptions<Koa.Context>);
      const app = new Koa();
      app.use(mount('/api', mw));
      return { listener: app.callback(), ready: () => mw.platform.ready() };
    },
  ],
  [
    'connect',
    (options) => {
      const mw = connectPlatform(options as CourierPlatformOptions<IncomingMessage>);
      const app = connect();
      app.use('/api', mw);
      return { listener: app, ready: () => mw.platform.ready() };
    },
  ],
];

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

async function start(build: (typeof MOUNTS)[number][1], oauth: Record<string, unknown> = {}): Promise<string> {
  const { listener, ready } = build({
    courier: false,
    quota: false,
    logger: silentLogger,
    oauth: { clients: await cheapClients(), signingKeys: [await sharedSigningKey()], authenticate: () => USERS.alice!, ...oauth },
  });
  await ready();
  served = await listen(listener);
  return served.url;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
}

async function discoveryAt(url: string): Promise<Discovery> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return (await res.json()) as Discovery;
}

describe.each(MOUNTS)('mounted under /api on %s, without publicUrl', (_, build) => {
  it('discovery names /api/oauth as the issuer, and every URL it gives answers from the platform when followed', async () => {
    const origin = await start(build);
    const doc = await discoveryAt(`${origin}/api/oauth/.well-known/openid-configuration`);
    const issuer = `${origin}/api/oauth`;
    expect(doc).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/jwks`,
    });

    // OIDC Discovery 4: the configuration is found under the issuer it names.
    expect((await discoveryAt(`${doc.issuer}/.well-known/openid-configuration`)).issuer).toBe(doc.issuer);

    const jwks = await fetch(doc.jwks_uri);
    expect(jwks.status).toBe(200);
    expect(((await jwks.json()) as { keys: unknown[] }).keys).toHaveLength(1);

    const authorize = new URL(doc.authorization_endpoint);
    authorize.search = new URLSearchParams({ response_type: 'code', client_id: CONFIDENTIAL.id, redirect_uri: CONFIDENTIAL.redirectUri, scope: 'openid', state: 's' }).toString();
    const consent = await fetch(authorize);
    expect(consent.status).toBe(200);
    // The consent form posts back under the same mount.
    expect(await consent.text()).toContain(`action="${doc.issuer}/consent"`);

    // RFC 6749 5.2 and RFC 6750 3: the token and userinfo endpoints answer, refusing a caller without credentials.
    const token = await fetch(doc.token_endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' });
    expect(token.status).toBe(401);
    expect(((await token.json()) as { error: string }).error).toBe('invalid_client');
    const userinfo = await fetch(doc.userinfo_endpoint);
    expect(userinfo.status).toBe(401);
    expect(userinfo.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  it('a configured publicUrl wins over the mount path', async () => {
    const origin = await start(build, { publicUrl: 'https://auth.example.com/api/' });
    const doc = await discoveryAt(`${origin}/api/oauth/.well-known/openid-configuration`);
    expect(doc.issuer).toBe('https://auth.example.com/api/oauth');
    expect(doc.jwks_uri).toBe('https://auth.example.com/api/oauth/jwks');
  });
});
