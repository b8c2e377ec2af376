/**
 * Configuration mistakes fail at `courierPlatform()`, on every adapter, with a ConfigurationError
 * (a TypeError, code `invalid_option`) whose message and `field` name what is wrong; nothing is
 * left to fail later as a 500 on every /oauth route. A call of the host's that cannot work
 * (platform.revokeGrants) rejects with one too.
 */
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { exportJWK, generateKeyPair } from 'jose';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { courierPlatform as connectPlatform } from '../../adapters/connect.js';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as koaPlatform } from '../../adapters/koa.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { createQuotaService, type QuotaServiceOptions } from '../../src/quota/index.js';
import { CONFIDENTIAL } from '../support/oauth.js';

const FACTORIES: [string, (options: CourierPlatformOptions) => unknown][] = [
  ['express', (options) => expressPlatform(options)],
  ['koa', (options) => koaPlatform(options)],
  ['connect', (options) => connectPlatform(options)],
];

/** A hash from hashClientSecret() as a shell leaves it in double quotes: `$1...` and `$salt` expanded. */
const SHELL_MANGLED_HASH = execFileSync('sh', ['-c', `printf %s "scrypt$16384$8$1$${'A'.repeat(22)}$${'B'.repeat(43)}"`], { env: {} }).toString();

function configurationErrorOf(build: () => unknown): ConfigurationError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toBeInstanceOf(TypeError);
    return error as ConfigurationError;
  }
  throw new Error('expected a ConfigurationError, got none');
}

const client = (change: Record<string, unknown>) => ({ id: CONFIDENTIAL.id, redirectUris: [CONFIDENTIAL.redirectUri], ...change });
/** What `process.env.X` gives when X is not set. */
const UNSET_ENV: string | undefined = undefined;
/** A client as connected in the host's own code; lazyConnect: nothing reaches a server. */
const redisClient = () => new Redis({ lazyConnect: true });

describe.each(FACTORIES)('courierPlatform() on %s refuses a bad configuration at once', (_, factory) => {
  const build = (options: CourierPlatformOptions) => () => factory({ logger: silentLogger, courier: false, ...options });

  it.each<[string, () => Promise<CourierPlatformOptions>, string, RegExp]>([
    ['a secret hash mangled by the shell', async () => ({ oauth: { clients: [client({ secretHash: SHELL_MANGLED_HASH })] } }), 'oauth.clients[0].secretHash', /single quotes/],
    ['the plain secret where its hash belongs', async () => ({ oauth: { clients: [client({ secretHash: 'the-client-secret' })] } }), 'oauth.clients[0].secretHash', /give a plain secret as `secret`/],
    ['a secret hash with a truncated hash part', async () => ({ oauth: { clients: [client({ secretHash: 'scrypt$16384$8$1$c2FsdA$aGFzaA' })] } }), 'oauth.clients[0].secretHash', /32 bytes/],
    ['a signing key that is not a PEM', async () => ({ oauth: { signingKeys: ['-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----'] } }), 'oauth.signingKeys[0]', /not a usable private key/],
    [
      'a public JWK as signing key',
      async () => ({ oauth: { signingKeys: [await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey)] } }),
      'oauth.signingKeys[0]',
      /no "d"/,
    ],
    ['a publicUrl without a scheme', async () => ({ oauth: { publicUrl: 'auth.example.com' } }), 'oauth.publicUrl', /absolute http\(s\) URL/],
    ['a relative redirect URI', async () => ({ oauth: { clients: [client({ redirectUris: ['/callback'] })] } }), 'oauth.clients[0].redirectUris[0]', /absolute http\(s\) URL/],
    [
      'a plain http redirect URI on a public host (RFC 6749 3.1.2.1)',
      async () => ({ oauth: { clients: [client({ public: true, redirectUris: ['http://127.0.0.1:9/cb', 'http://partner.example/cb'] })] } }),
      'oauth.clients[0].redirectUris[1]',
      /must be https: plain http is for 127\.0\.0\.1, \[::1\] and localhost only/,
    ],
    ['two clients with one id', async () => ({ oauth: { clients: [client({ public: true }), client({ public: true })] } }), 'oauth.clients[1].id', /clients\[0\]/],
    [
      'a client whose secretHash reads an unset environment variable',
      async () => ({ oauth: { clients: [client({ secretHash: UNSET_ENV })] } }),
      'oauth.clients[0].secretHash',
      /is undefined \(is the environment variable it reads set\?\): give secretHash \(or secret\), or mark a client without a secret public: true/,
    ],
    ['a client with neither a secret nor public: true', async () => ({ oauth: { clients: [client({})] } }), 'oauth.clients[0].secretHash', /is required: give secretHash/],
    [
      'a client_credentials client whose secret is unset',
      async () => ({ oauth: { clients: [client({ secret: UNSET_ENV, grants: ['client_credentials'] })] } }),
      'oauth.clients[0].secretHash',
      /is undefined/,
    ],
    [
      'an admin token that reads an unset environment variable',
      async () => ({ admin: { token: UNSET_ENV } }),
      'admin.token',
      /is undefined \(is the environment variable it reads set\?\): the admin API needs `token` or `authorize`, or nobody could call it/,
    ],
    ['an admin API with neither a token nor authorize', async () => ({ admin: {} }), 'admin.token', /needs `token` or `authorize`: without one nobody could call the admin API/],
    ['a public client with a secret', async () => ({ oauth: { clients: [client({ public: true, secret: CONFIDENTIAL.secret })] } }), 'oauth.clients[0].public', /a public client has none/],
    ['an upstream URL that is not http(s)', async () => ({ courier: { upstreamUrl: 'ftp://courier.example' } }), 'courier.upstreamUrl', /http\(s\)/],
    ['a quota rule without its clientId', async () => ({ quota: { rules: [{ scope: 'client', apiPath: '/openapi/v1/orders' }] } }), 'quota.rules[0].clientId', /needs a clientId/],
    ['an API document path item that is not an object', async () => ({ apiDocument: { paths: { '/openapi/v1/orders': 'get' } } }) as unknown as CourierPlatformOptions, 'apiDocument.paths./openapi/v1/orders', /: must be an object$/],
    ['a quota rule whose path lacks its leading slash', async () => ({ quota: { rules: [{ scope: 'global', apiPath: 'openapi/v1/orders', minute: 10 }] } }), 'quota.rules[0].apiPath', /must start with "\/"/],
    ['a quota rule of an unknown scope', async () => ({ quota: { rules: [{ scope: 'app', apiPath: '/openapi/v1/orders' }] } }) as unknown as CourierPlatformOptions, 'quota.rules[0].scope', /must be one of "client", "global"/],
    ['one quota rule without the list around it', async () => ({ quota: { rules: { scope: 'global', apiPath: '/openapi/v1/orders' } } }) as unknown as CourierPlatformOptions, 'quota.rules', /must be an array of rules or a rule source/],
    ['a quota rule cost no counter can hold', async () => ({ quota: { rules: [{ scope: 'global', apiPath: '/openapi/v1/hugecost', cost: Number.MAX_SAFE_INTEGER, minute: 0, day: 0, month: 0 }] } }), 'quota.rules[0].cost', /must be at most 1000$/],
    ['a default limit above 1e12', async () => ({ quota: { defaults: { month: 1e13 } } }), 'quota.defaults.month', /must be at most 1000000000000$/],
    ['a quota rule path with a dot segment', async () => ({ quota: { rules: [{ scope: 'global', apiPath: '/openapi/v1/x/../dots', minute: 1 }] } }), 'quota.rules[0].apiPath', /must not hold "\." or "\.\." segments/],
    ['a quota rule no call can pass', async () => ({ quota: { rules: [{ scope: 'global', apiPath: '/openapi/v1/orders', cost: 5, minute: 3 }] } }), 'quota.rules[0]', /cost 5 exceeds the minute limit 3/],
    ['an unknown time zone', async () => ({ quota: { timeZone: 'Mars/Olympus_Mons' } }), 'quota.timeZone', /IANA time zone/],
    ['a misspelt option', async () => ({ oauth: { publicURL: 'https://auth.example.com' } }) as CourierPlatformOptions, 'oauth.publicURL', /is not an option; did you mean `publicUrl`\?$/],
    ['an option with two letters swapped', async () => ({ oauth: { pubilcUrl: 'https://auth.example.com' } }) as CourierPlatformOptions, 'oauth.pubilcUrl', /did you mean `publicUrl`\?$/],
    ['a nested option cut short', async () => ({ quota: { ruleCache: { ttl: 10 } } }) as CourierPlatformOptions, 'quota.ruleCache.ttl', /did you mean `ttlMs`\?$/],
    ['an option close to none', async () => ({ oauth: { colour: 'blue' } }) as CourierPlatformOptions, 'oauth.colour', /is not an option \(check the spelling\)$/],
    ['an unknown option named like a framework argument', async () => ({ req: null }) as unknown as CourierPlatformOptions, 'req', /is not an option/],
    ['an option of a part written at the top', async () => ({ publicUrl: 'https://auth.example.com' }) as CourierPlatformOptions, 'publicUrl', /is not an option here; did you mean `oauth\.publicUrl`\?$/],
    ['a part\'s option at the top that is close to a top-level one', async () => ({ clients: [] }) as CourierPlatformOptions, 'clients', /did you mean `oauth\.clients`\?$/],
    ['an option one level above its object', async () => ({ courier: { appId: 'sandbox-app', appSecret: 'sandbox-secret' } }) as CourierPlatformOptions, 'courier.appId', /courier\.appId: is not an option here; did you mean `courier\.credentials\.appId`\?; courier\.appSecret: .*`courier\.credentials\.appSecret`\?$/],
    ['an option of another part', async () => ({ oauth: { timeZone: 'Asia/Shanghai' } }) as CourierPlatformOptions, 'oauth.timeZone', /did you mean `quota\.timeZone`\?$/],
    ['an option two parts have, at the top', async () => ({ store: {} }) as CourierPlatformOptions, 'store', /did you mean `oauth\.store` or `quota\.store`\?$/],
    ['a typo of a name here, also a name elsewhere', async () => ({ oauth: { clients: [client({ public: true, scope: ['openid'] })] } }) as CourierPlatformOptions, 'oauth.clients[0].scope', /did you mean `scopes`\?$/],
    ['an ioredis client as oauth.store', async () => ({ oauth: { store: redisClient() } }) as unknown as CourierPlatformOptions, 'oauth.store', /Redis client \(ioredis\), not an OAuthStore: write `store: createRedisOAuthStore\(\{ client \}\)`/],
    ['an ioredis client as quota.store', async () => ({ quota: { store: redisClient() } }) as unknown as CourierPlatformOptions, 'quota.store', /write `store: createRedisQuotaStore\(\{ client \}\)`/],
    ['a pg Pool as oauth.store', async () => ({ oauth: { store: new pg.Pool() } }) as unknown as CourierPlatformOptions, 'oauth.store', /PostgreSQL client \(pg\), not an OAuthStore: write `store: createPostgresOAuthStore\(\{ pool \}\)`/],
    ['a pg Pool as quota.store', async () => ({ quota: { store: new pg.Pool() } }) as unknown as CourierPlatformOptions, 'quota.store', /write `store: createPostgresQuotaStore\(\{ pool \}\)`/],
    ['quota without a way to identify the caller', async () => ({ oauth: false, quota: {} }), 'quota.verifyToken', /OAuth server is off/],
    ['a part mounted inside the courier proxy', async () => ({ courier: {}, quota: { basePath: '/courier/openapi' } }), 'quota.basePath', /within courier\.basePath/],
  ])('%s, naming %s', async (_, options, field, message) => {
    const error = configurationErrorOf(build(await options()));
    expect(error.code).toBe('invalid_option');
    expect(error.field).toBe(field);
    expect(error.message).toContain(`${field}: `);
    expect(error.message).toMatch(message);
  });

  it('starts a client without a secret that is marked public: true', () => {
    expect(() => build({ oauth: { clients: [{ ...client({}), public: true }] } })()).not.toThrow();
  });

  it('lists every bad field in one message', () => {
    const error = configurationErrorOf(build({ courier: { timeoutMs: -1, retries: 1.5 }, bodyLimit: 0 }));
    expect(error.issues.map((issue) => issue.field).sort()).toEqual(['bodyLimit', 'courier.retries', 'courier.timeoutMs']);
  });
});

describe('quota options: one check, one message, whichever way they come in', () => {
  it.each<[string, QuotaServiceOptions]>([
    ['a bad rule', { rules: [{ scope: 'global', clientId: 'a', apiPath: '/x' }] }],
    ['a duplicate rule', { rules: [{ scope: 'global', apiPath: '/x' }, { scope: 'global', apiPath: '/x/' }] }],
    ['a bad default', { defaults: { minute: -1 } }],
    ['an unknown option', { storeTimeout: 5 } as QuotaServiceOptions],
    ['a zero timeout', { storeTimeoutMs: 0 }],
  ])('%s: createQuotaService and courierPlatform say the same', (_, quota) => {
    const standalone = configurationErrorOf(() => createQuotaService(quota));
    const mounted = configurationErrorOf(() => expressPlatform({ logger: silentLogger, courier: false, oauth: false, quota: { ...quota, verifyToken: () => undefined } }));
    expect(mounted.message).toBe(standalone.message);
    expect(mounted.field).toBe(standalone.field);
  });
});

describe("platform.revokeGrants: a mistake in the host's call is a ConfigurationError naming it", () => {
  it('with the OAuth server off (oauth: false), names oauth', async () => {
    const { platform } = expressPlatform({ logger: silentLogger, courier: false, oauth: false, quota: false, admin: false });
    await expect(platform.revokeGrants({ sub: 'user-alice', clientId: CONFIDENTIAL.id })).rejects.toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_option', field: 'oauth' }),
    );
  });

  it.each([
    ['sub', { sub: '', clientId: CONFIDENTIAL.id }],
    ['clientId', { sub: 'user-alice', clientId: 42 }],
  ])('with a bad %s, names it', async (field, grants) => {
    const { platform } = expressPlatform({ logger: silentLogger, courier: false, quota: false, admin: false });
    await expect(platform.revokeGrants(grants as { sub: string; clientId: string })).rejects.toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_argument', field }),
    );
  });
});
