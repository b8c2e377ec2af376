/**
 * Discovery (OIDC Discovery 3, 4; docs/oauth.md), the JWKS (RFC 7517) with key rotation, and
 * the id_token a relying party verifies against them (OIDC Core 2, 3.1.3.6, 3.1.3.7).
 */
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify, type JSONWebKeySet, type JWK } from 'jose';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cheapClients } from '../../support/oauth.js';
import { ADAPTER_NAMES, atHashOf, authorizeQuery, closeHosts, CONFIDENTIAL, ENCODED, OTHER, rsaSigningKey, startHost, testClock, type TestHost } from './helpers.js';

afterEach(closeHosts);

let newKey: JWK;
let oldKey: JWK;
beforeAll(async () => {
  [newKey, oldKey] = await Promise.all([rsaSigningKey('rotation-2031'), rsaSigningKey('rotation-2030')]);
});

interface Discovery {
  issuer: string;
  jwks_uri: string;
  [field: string]: unknown;
}

async function discovery(host: TestHost): Promise<Discovery> {
  const res = await host.get('/oauth/.well-known/openid-configuration');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.body as Discovery;
}

async function jwks(host: TestHost): Promise<JSONWebKeySet> {
  const res = await host.get(new URL((await discovery(host)).jwks_uri).pathname);
  expect(res.status).toBe(200);
  return res.body as JSONWebKeySet;
}

describe.each(ADAPTER_NAMES)('discovery and id_token on %s', (adapter) => {
  it('OIDC Discovery 3: the document has every field docs/oauth.md lists', async () => {
    const host = await startHost(adapter);
    const doc = await discovery(host);
    const issuer = `${host.origin}/oauth`;
    expect(doc).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/jwks`,
      // RFC 8414 2: where RFC 7009 revocation and RFC 7662 introspection answer.
      revocation_endpoint: `${issuer}/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
      introspection_endpoint: `${issuer}/introspect`,
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
      // OIDC Discovery 3: request_uri_parameter_supported defaults to true, so both are said.
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    });
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
    expect(doc.subject_types_supported).toEqual(expect.arrayContaining(['public']));
    expect(doc.id_token_signing_alg_values_supported).toContain('RS256');
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'offline_access']));
    expect(doc.token_endpoint_auth_methods_supported).toContain('client_secret_basic');
    expect(doc.token_endpoint_auth_methods_supported).not.toContain('client_secret_post');
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.claims_supported).toEqual(expect.arrayContaining(['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'name', 'preferred_username', 'email', 'email_verified']));
  });

  it('OIDC Discovery 4.3: the issuer is {origin}/oauth and equals the iss of id_tokens and of authorization responses', async () => {
    const host = await startHost(adapter);
    const { issuer } = await discovery(host);
    expect(issuer).toBe(`${host.origin}/oauth`);
    const callback = await host.code({});
    expect(callback.get('iss')).toBe(issuer);
    const tokens = (await host.exchange(callback.get('code')!)).body as { id_token: string };
    const { payload } = await jwtVerify(tokens.id_token, createLocalJWKSet(await jwks(host)), { currentDate: new Date(host.clock.now()) });
    expect(payload.iss).toBe(issuer);
  });

  it('RFC 9110 7.2: without publicUrl the issuer comes from Host: a Host no URL can carry is a 400, and the document varies with Host', async () => {
    const host = await startHost(adapter);
    const good = await host.http().get('/oauth/.well-known/openid-configuration');
    expect(good.headers.vary).toMatch(/\bhost\b/i);
    // A Host a URL writes another way is taken in that form: the issuer and every URL agree.
    // (@hono/node-server, under the Hono and fetch hosts here, answers 400 itself to a long-form IPv6 Host.)
    const rewritten = [['EXAMPLE.com:80', 'example.com'], ...(adapter === 'hono' || adapter === 'fetch' ? [] : [['[0:0:0:0:0:0:0:1]:8080', '[::1]:8080']])];
    for (const [sent, written] of rewritten) {
      const doc = await host.http().get('/oauth/.well-known/openid-configuration').set('host', sent!);
      expect(doc.status, sent).toBe(200);
      expect(doc.body.issuer).toBe(`http://${written}/oauth`);
      expect(doc.body.token_endpoint).toBe(`http://${written}/oauth/token`);
    }
    // @hono/node-server (under the Hono and fetch hosts here) builds no Request for an IPv4 address
    // out of range: it answers 500 for any handler that reads the headers, the host's own too.
    const unbuildable = adapter === 'hono' || adapter === 'fetch' ? ['999.999.999.999'] : [];
    const bads = ['a b', '[', 'x/y', 'x@y', '127.0.0.1:99999', '[:::]', '999.999.999.999', '0x7f.1'].filter((bad) => !unbuildable.includes(bad));
    for (const bad of bads) {
      for (const path of ['/oauth/.well-known/openid-configuration', `/oauth/authorize?${authorizeQuery({})}`]) {
        const answer = await host.http().get(path).set('host', bad);
        expect(answer.status, `${bad} ${path}`).toBe(400);
        expect(answer.text).not.toMatch(/Invalid URL|ERR_INVALID_URL|\bat\s+\S+\s+\(/);
      }
    }
  });

  it('RFC 7517 / OIDC Core 10.1: the JWKS has the kid of id_token headers and publishes public parts only', async () => {
    const host = await startHost(adapter);
    const set = await jwks(host);
    const tokens = await host.tokens({});
    const { kid, alg } = decodeProtectedHeader(tokens.id_token!);
    expect(alg).toBe('RS256');
    expect(set.keys.map((k) => k.kid)).toContain(kid);
    for (const key of set.keys) {
      expect(key).toMatchObject({ kty: 'RSA', use: 'sig' });
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key, secret).not.toHaveProperty(secret);
    }
  });

  it('OIDC Core 10.1.1 (rotation): with signingKeys [new, old] the JWKS lists both and id_tokens are signed by the first', async () => {
    const host = await startHost(adapter, { oauth: { signingKeys: [newKey, oldKey] } });
    const set = await jwks(host);
    expect(set.keys.map((k) => k.kid)).toEqual(['rotation-2031', 'rotation-2030']);
    const tokens = await host.tokens({});
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe('rotation-2031');
    await jwtVerify(tokens.id_token!, createLocalJWKSet(set), { issuer: host.issuer, audience: CONFIDENTIAL.id, currentDate: new Date(host.clock.now()) });
  });

  it('OIDC Core 10.1.1 (rotation): an id_token signed before the rotation still verifies against the new JWKS', async () => {
    const clock = testClock();
    const before = await startHost(adapter, { clock, oauth: { signingKeys: [oldKey] } });
    const oldToken = (await before.tokens({})).id_token!;
    const after = await startHost(adapter, { clock, oauth: { signingKeys: [newKey, oldKey] } });
    const { protectedHeader } = await jwtVerify(oldToken, createLocalJWKSet(await jwks(after)), { currentDate: new Date(clock.now()) });
    expect(protectedHeader.kid).toBe('rotation-2030');
  });

  it('OIDC Core 15.1 / OIDC Registration 2: RS256 signs by default; a client registered with ES256 or EdDSA gets id_tokens of that algorithm, all verifiable with the JWKS', async () => {
    const [ec, ed] = await Promise.all(
      (['ES256', 'EdDSA'] as const).map(async (alg) => ({ ...(await exportJWK((await generateKeyPair(alg, { extractable: true })).privateKey)), kid: `k-${alg}` })),
    );
    const clients = (await cheapClients()).map((client) =>
      client.id === OTHER.id ? { ...client, idTokenSigningAlg: 'ES256' as const } : client.id === ENCODED.id ? { ...client, idTokenSigningAlg: 'EdDSA' as const } : client,
    );
    const clock = testClock();
    const host = await startHost(adapter, { clock, oauth: { signingKeys: [ec!, newKey, ed!], clients } });
    expect(((await discovery(host)).id_token_signing_alg_values_supported as string[]).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    const keys = createLocalJWKSet(await jwks(host));

    for (const [client, alg, kid] of [
      [CONFIDENTIAL, 'RS256', newKey.kid],
      [OTHER, 'ES256', 'k-ES256'],
      [ENCODED, 'EdDSA', 'k-EdDSA'],
    ] as const) {
      const callback = await host.code({ client_id: client.id, redirect_uri: client.redirectUri, scope: 'openid' });
      const res = await host.exchange(callback.get('code')!, { client, redirectUri: client.redirectUri });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const { id_token } = res.body as { id_token: string };
      const { protectedHeader } = await jwtVerify(id_token, keys, { issuer: host.issuer, audience: client.id, algorithms: [alg], currentDate: new Date(clock.now()) });
      expect(protectedHeader).toMatchObject({ alg, kid });
    }
  });

  it('OIDC Core 2 / 3.1.3.7: the id_token verifies with the JWKS: iss, aud, sub, exp > iat, nonce, auth_time and at_hash', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock });
    const authTime = clock.seconds() - 42;
    const session = { user: 'alice', authTime } as const;
    const callback = await host.code({ nonce: 'n-0S6_WzA2Mj', scope: 'openid profile email' }, session);
    const res = await host.exchange(callback.get('code')!);
    const { id_token, access_token } = res.body as { id_token: string; access_token: string };

    const { payload } = await jwtVerify(id_token, createLocalJWKSet(await jwks(host)), {
      issuer: host.issuer,
      audience: CONFIDENTIAL.id,
      algorithms: ['RS256'],
      currentDate: new Date(clock.now()),
    });
    expect(payload.sub).toBe('user-alice');
    expect(payload.aud).toBe(CONFIDENTIAL.id);
    expect(payload.iat).toBe(clock.seconds());
    expect(payload.exp).toBeGreaterThan(payload.iat!);
    expect(payload.nonce).toBe('n-0S6_WzA2Mj');
    expect(payload.auth_time).toBe(authTime);
    expect(payload.at_hash).toBe(atHashOf(access_token));
    expect(payload).toMatchObject({ name: 'Alice Liddell', email: 'alice@example.com' });
  });

  it('OIDC Core 2: no nonce claim when none was sent; auth_time is there even when the host reports none', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ nonce: undefined, scope: 'openid' });
    const { payload } = await jwtVerify(tokens.id_token!, createLocalJWKSet(await jwks(host)), {
      issuer: host.issuer,
      audience: CONFIDENTIAL.id,
      currentDate: new Date(host.clock.now()),
    });
    expect(payload).not.toHaveProperty('nonce');
    expect(payload.auth_time).toEqual(expect.any(Number));
    expect(payload).not.toHaveProperty('email');
    expect(payload).not.toHaveProperty('name');
  });

  it('OIDC Core 3.1.3.7 / 12.2: the id_token of a refresh keeps sub, aud and auth_time', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock });
    const authTime = clock.seconds() - 10;
    const first = await host.tokens({ scope: 'openid offline_access' }, { user: 'alice', authTime });
    clock.advance(600);
    const refreshed = (await host.refresh(first.refresh_token!)).body as { id_token: string; access_token: string };
    const { payload } = await jwtVerify(refreshed.id_token, createLocalJWKSet(await jwks(host)), {
      issuer: host.issuer,
      audience: CONFIDENTIAL.id,
      currentDate: new Date(clock.now()),
    });
    expect(payload).toMatchObject({ sub: 'user-alice', auth_time: authTime, iat: clock.seconds() });
    expect(payload.at_hash).toBe(atHashOf(refreshed.access_token));
  });
});
