/**
 * The address the brute-force limits count (docs/deployment.md#clientip): the framework's own
 * (Express `req.ip` under `trust proxy`, Koa `ctx.ip` under `app.proxy`, Fastify `request.ip`
 * under `trustProxy`), else the socket's peer, and the host's `clientIp` before either. Behind a proxy that nobody trusts, one warning per
 * process names the option to set. Every host here comes from freshly loaded modules, so each
 * test starts as a new process would.
 */
import type { RequestListener } from 'node:http';
import express from 'express';
import Koa from 'koa';
import connect from 'connect';
import Fastify from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { header, type PlatformRequest } from '../../src/core/http.js';
import type { OAuthOptions } from '../../src/oauth/options.js';
import { postFormFrom, type Answer } from '../support/from-address.js';
import { capturingLogger } from '../support/logger.js';
import { fastifyListener } from '../support/apps.js';
import { serve, type Served } from '../support/net.js';
import { cheapClients, CONFIDENTIAL, oauthTestOptions, sharedSigningKey } from '../support/oauth.js';
import { basic } from '../oauth/compliance/helpers.js';

const LIMIT = 10;
const PROXY_WARNING = /clientIp/;

interface HostSetup {
  /** Express `trust proxy` ('loopback'), Koa `app.proxy` or Fastify `trustProxy`. */
  trustProxy?: boolean;
  clientIp?: (request: PlatformRequest) => string | undefined;
}

const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function startHost(adapter: 'express' | 'koa' | 'connect' | 'fastify', setup: HostSetup = {}) {
  vi.resetModules();
  const logger = capturingLogger();
  const oauth: OAuthOptions = { ...oauthTestOptions(), clients: await cheapClients(), signingKeys: [await sharedSigningKey()], authenticate: () => null };
  const options = { courier: false as const, logger, oauth, ...(setup.clientIp ? { clientIp: setup.clientIp } : {}) };
  let listener: RequestListener;
  let ready: () => Promise<void>;
  if (adapter === 'express') {
    const { courierPlatform } = await import('../../adapters/express.js');
    const app = express();
    if (setup.trustProxy) app.set('trust proxy', 'loopback');
    const platform = courierPlatform(options as Parameters<typeof courierPlatform>[0]);
    app.use(platform);
    [listener, ready] = [app, () => platform.platform.ready()];
  } else if (adapter === 'koa') {
    const { courierPlatform } = await import('../../adapters/koa.js');
    const app = new Koa({ proxy: setup.trustProxy === true });
    const platform = courierPlatform(options as Parameters<typeof courierPlatform>[0]);
    app.use(platform);
    [listener, ready] = [app.callback(), () => platform.platform.ready()];
  } else if (adapter === 'fastify') {
    const { courierPlatform } = await import('../../adapters/fastify.js');
    const app = Fastify({ trustProxy: setup.trustProxy === true ? '127.0.0.1' : false });
    const platform = courierPlatform(options as Parameters<typeof courierPlatform>[0]);
    app.register(platform);
    [listener, ready] = [fastifyListener(app as never), () => platform.platform.ready()];
  } else {
    const { courierPlatform } = await import('../../adapters/connect.js');
    const app = connect();
    const platform = courierPlatform(options as Parameters<typeof courierPlatform>[0]);
    app.use(platform);
    [listener, ready] = [app, () => platform.platform.ready()];
  }
  await ready();
  const server = await serve(listener);
  servers.push(server);
  const attempt = (secret: string, headers: Record<string, string> = {}): Promise<Answer> =>
    postFormFrom('127.0.0.1', `${server.url}/oauth/token`, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(CONFIDENTIAL.id, secret), ...headers });
  const proxyWarnings = () => logger.records.filter((record) => record.level === 'warn' && PROXY_WARNING.test(record.message));
  return { attempt, proxyWarnings };
}

/** LIMIT + 2 wrong secrets through the proxy for one caller: the statuses, in order. */
async function guessesVia(host: Awaited<ReturnType<typeof startHost>>, headers: Record<string, string>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT + 2; i++) statuses.push((await host.attempt('wrong-secret-1234', headers)).status);
  return statuses;
}

const SLOWED = [...Array(LIMIT).fill(401), 429, 429];

describe('the address the brute-force limits count', { timeout: 60_000 }, () => {
  it.each(['express', 'koa', 'fastify'] as const)(
    "RFC 6749 10.10: %s trusting its proxy ('trust proxy', app.proxy, trustProxy) counts the X-Forwarded-For address: a guesser behind the proxy does not slow another caller behind it",
    async (adapter) => {
      const host = await startHost(adapter, { trustProxy: true });
      expect(await guessesVia(host, { 'x-forwarded-for': '203.0.113.7' })).toEqual(SLOWED);
      // Authenticated (the grant is what fails): 400.
      expect((await host.attempt(CONFIDENTIAL.secret, { 'x-forwarded-for': '198.51.100.20' })).status).toBe(400);
      expect(host.proxyWarnings()).toEqual([]);
    },
  );

  it.each(['express', 'koa', 'connect', 'fastify'] as const)(
    'without proxy trust, %s counts the connection (the proxy) and warns once per process, naming the clientIp option',
    async (adapter) => {
      const host = await startHost(adapter);
      expect(await guessesVia(host, { 'x-forwarded-for': '203.0.113.7' })).toEqual(SLOWED);
      expect((await host.attempt(CONFIDENTIAL.secret, { forwarded: 'for=198.51.100.20' })).status).toBe(429);
      const warnings = host.proxyWarnings();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain('X-Forwarded-For');
      expect(warnings[0]!.line).not.toContain('wrong-secret-1234');
    },
  );

  it('the Forwarded header alone warns too', async () => {
    const host = await startHost('connect');
    await host.attempt('wrong-secret-1234', { forwarded: 'for=198.51.100.20' });
    expect(host.proxyWarnings().map((record) => record.message)).toEqual([expect.stringContaining('Forwarded')]);
  });

  it("the clientIp option wins over the framework's address, and needs no warning", async () => {
    const host = await startHost('express', { clientIp: (request) => header(request, 'x-real-ip') });
    expect(await guessesVia(host, { 'x-real-ip': '203.0.113.7', 'x-forwarded-for': '203.0.113.7' })).toEqual(SLOWED);
    expect((await host.attempt(CONFIDENTIAL.secret, { 'x-real-ip': '198.51.100.20', 'x-forwarded-for': '198.51.100.20' })).status).toBe(400);
    expect(host.proxyWarnings()).toEqual([]);
  });

  it("a fetch handler called without the runtime's info has no caller address: one warning per process names what to pass", async () => {
    const start = async (info?: unknown, clientIp?: () => undefined) => {
      vi.resetModules();
      const logger = capturingLogger();
      const { courierPlatform } = await import('../../adapters/fetch.js');
      const oauth: OAuthOptions = { ...oauthTestOptions(), clients: await cheapClients(), signingKeys: [await sharedSigningKey()], authenticate: () => null };
      const platform = courierPlatform({ courier: false, logger, oauth, ...(clientIp ? { clientIp } : {}) });
      await platform.platform.ready();
      const attempt = () =>
        platform(
          new Request('http://127.0.0.1/oauth/token', {
            method: 'POST',
            headers: { authorization: basic(CONFIDENTIAL.id, 'wrong-secret-1234'), 'content-type': 'application/x-www-form-urlencoded' },
            body: 'grant_type=refresh_token&refresh_token=x',
          }),
          info,
        );
      const warnings = () => logger.records.filter((record) => record.level === 'warn' && /no caller address/.test(record.message));
      return { attempt, warnings };
    };
    const bare = await start();
    expect((await bare.attempt())!.status).toBe(401);
    expect((await bare.attempt())!.status).toBe(401);
    expect(bare.warnings()).toHaveLength(1);
    expect(bare.warnings()[0]!.message).toContain('set the clientIp option');
    expect(bare.warnings()[0]!.line).not.toContain('wrong-secret-1234');
    // A clientIp that answers nothing is not told to set clientIp, but to make it answer.
    const unanswered = await start(undefined, () => undefined);
    expect((await unanswered.attempt())!.status).toBe(401);
    expect(unanswered.warnings()).toHaveLength(1);
    expect(unanswered.warnings()[0]!.message).toContain('make the clientIp option answer an address for every request');
    expect(unanswered.warnings()[0]!.message).not.toContain('set the clientIp option');
    // Deno's connection info carries the address: nothing to warn about.
    const deno = await start({ remoteAddr: { hostname: '203.0.113.7' } });
    expect((await deno.attempt())!.status).toBe(401);
    expect(deno.warnings()).toEqual([]);
  });

  it('requests without forwarded headers warn about nothing', async () => {
    const host = await startHost('express');
    await host.attempt('wrong-secret-1234');
    expect(host.proxyWarnings()).toEqual([]);
  });
});
