/**
 * id_tokens as a relying party receives them: a JWS Compact Serialization (RFC 7515 7.1) that an
 * independent JOSE library (jose) verifies with the published key, for every algorithm a
 * configured key may sign with (RFC 7518 3.1, RFC 8037 3.1), carrying the claims of OIDC Core 2.
 */
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { signIdToken } from '../../src/oauth/id-token.js';
import { readSigningKey, type SigningKey } from '../../src/oauth/keys.js';

const ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

async function keyFor(alg: (typeof ALGS)[number]): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const key = readSigningKey({ ...(await exportJWK(privateKey)), kid: `k-${alg}`, alg });
  if (typeof key === 'string') throw new Error(key);
  return key;
}

const NOW = Date.UTC(2031, 4, 12, 8, 30, 0);
const ACCESS_TOKEN = 'AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

describe('id_token signing', () => {
  it.each(ALGS)('%s: jose verifies it with the published key; header alg, kid and typ; OIDC Core 2 claims', async (alg) => {
    const key = await keyFor(alg);
    const token = await signIdToken(key, {
      issuer: 'https://op.example/oauth',
      clientId: 'app',
      sub: 'user-1',
      claims: { sub: 'user-1', name: 'Ada' },
      authTime: Math.floor(NOW / 1000) - 60,
      nonce: 'n-0S6',
      accessToken: ACCESS_TOKEN,
      now: NOW,
      lifetimeSeconds: 300,
    });
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet({ keys: [key.publicJwk] }), {
      issuer: 'https://op.example/oauth',
      audience: 'app',
      algorithms: [alg],
      currentDate: new Date(NOW),
    });
    expect(protectedHeader).toEqual({ alg, kid: `k-${alg}`, typ: 'JWT' });
    const iat = Math.floor(NOW / 1000);
    expect(payload).toMatchObject({ sub: 'user-1', name: 'Ada', nonce: 'n-0S6', iat, exp: iat + 300, auth_time: iat - 60 });
    // OIDC Core 3.1.3.6: the left half of the hash the algorithm names (SHA-512 for Ed25519).
    const digest = createHash(alg === 'EdDSA' ? 'sha512' : `sha${alg.slice(2)}`).update(ACCESS_TOKEN).digest();
    expect(payload.at_hash).toBe(digest.subarray(0, digest.length / 2).toString('base64url'));
  });

  it('the registered claims win over user claims of the same name, and a token without a nonce has none', async () => {
    const key = await keyFor('RS256');
    const token = await signIdToken(key, {
      issuer: 'https://op.example/oauth',
      clientId: 'app',
      sub: 'user-1',
      claims: { sub: 'user-1', iss: 'https://evil.example', aud: 'other', exp: 1 },
      authTime: Math.floor(NOW / 1000),
      accessToken: ACCESS_TOKEN,
      now: NOW,
      lifetimeSeconds: 300,
    });
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: [key.publicJwk] }), { currentDate: new Date(NOW) });
    expect(payload).toMatchObject({ iss: 'https://op.example/oauth', aud: 'app', exp: Math.floor(NOW / 1000) + 300 });
    expect(payload).not.toHaveProperty('nonce');
    expect(decodeProtectedHeader(token).kid).toBe(key.kid);
  });
});
