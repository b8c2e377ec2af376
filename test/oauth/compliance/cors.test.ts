/**
 * Browser apps on another origin (docs/oauth.md#browser-apps-on-another-origin), through the CORS
 * protocol of the Fetch standard: discovery, the JWKS, the token endpoint, revocation and userinfo
 * are readable from any origin, errors included, and never with credentials; userinfo answers the
 * preflight of its Bearer header; the token endpoint and introspection answer none, so a client
 * secret in an Authorization header cannot be sent from a page on another origin.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, closeHosts, pkcePair, PUBLIC, startHost, type TestHost } from './helpers.js';

afterEach(closeHosts);

const ORIGIN = 'https://spa.example';

function expectReadable(res: { headers: Record<string, string | undefined> }): void {
  expect(res.headers['access-control-allow-origin']).toBe('*');
  // Readable without credentials only: no cookie of this site ever reaches another origin's page.
  expect(res.headers['access-control-allow-credentials']).toBeUndefined();
}

async function publicTokens(host: TestHost) {
  const { verifier, challenge } = pkcePair();
  const callback = await host.code({ client_id: PUBLIC.id, redirect_uri: PUBLIC.redirectUri, scope: 'openid profile offline_access', code_challenge: challenge, code_challenge_method: 'S256' });
  const form = { grant_type: 'authorization_code', code: callback.get('code')!, redirect_uri: PUBLIC.redirectUri, code_verifier: verifier, client_id: PUBLIC.id };
  return { form, answer: await host.postForm('/oauth/token', form, { origin: ORIGIN }) };
}

describe.each(ADAPTER_NAMES)('browser apps on another origin, on %s', (adapter) => {
  it('Fetch CORS protocol: discovery and the JWKS are readable from any origin', async () => {
    const host = await startHost(adapter);
    for (const path of ['/oauth/.well-known/openid-configuration', '/oauth/jwks']) {
      const res = await host.get(path, undefined, { origin: ORIGIN });
      expect(res.status, path).toBe(200);
      expectReadable(res);
    }
  });

  it("RFC 6749 4.1.3 with RFC 7636: a public client's code exchange, its refresh and its revocation are readable there, and so is an error", async () => {
    const host = await startHost(adapter);
    const { form, answer } = await publicTokens(host);
    expect(answer.status).toBe(200);
    expectReadable(answer);
    const replayed = await host.postForm('/oauth/token', form, { origin: ORIGIN });
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe('invalid_grant');
    expectReadable(replayed);
    const refreshToken = (answer.body as { refresh_token: string }).refresh_token;
    const refreshed = await host.postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: PUBLIC.id }, { origin: ORIGIN });
    expectReadable(refreshed);
    const revoked = await host.postForm('/oauth/revoke', { token: refreshToken, client_id: PUBLIC.id }, { origin: ORIGIN });
    expect(revoked.status).toBe(200);
    expectReadable(revoked);
  });

  it('OIDC Core 5.3 with RFC 6750 2.1: userinfo answers the preflight of a Bearer header, then the call; its 401 shows WWW-Authenticate', async () => {
    const host = await startHost(adapter);
    const { answer } = await publicTokens(host);
    const preflight = await host
      .http()
      .options('/oauth/userinfo')
      .set({ origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' });
    expect(preflight.status).toBe(204);
    expectReadable(preflight);
    expect(preflight.headers['access-control-allow-methods']).toMatch(/\bGET\b/);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/\bAuthorization\b/i);
    const accessToken = (answer.body as { access_token: string }).access_token;
    const claims = await host.get('/oauth/userinfo', undefined, { origin: ORIGIN, authorization: `Bearer ${accessToken}` });
    expect(claims.status).toBe(200);
    expectReadable(claims);
    const refused = await host.get('/oauth/userinfo', undefined, { origin: ORIGIN, authorization: 'Bearer not-a-token' });
    expect(refused.status).toBe(401);
    expectReadable(refused);
    expect(refused.headers['access-control-expose-headers']).toMatch(/\bWWW-Authenticate\b/);
  });

  it('no preflight at the token endpoint or introspection: a client secret cannot be sent from a page on another origin', async () => {
    const host = await startHost(adapter);
    for (const path of ['/oauth/token', '/oauth/introspect', '/oauth/revoke']) {
      const preflight = await host
        .http()
        .options(path)
        .set({ origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' });
      // A preflight passes only with an ok status and the header allowed (Fetch, CORS-preflight fetch).
      expect(preflight.status, path).toBe(405);
      expect(preflight.headers['access-control-allow-headers'], path).toBeUndefined();
    }
    const introspection = await host.postForm('/oauth/introspect', { token: 'x' }, { origin: ORIGIN });
    expect(introspection.headers['access-control-allow-origin']).toBeUndefined();
  });
});
