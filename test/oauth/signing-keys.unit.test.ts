/**
 * Signing keys from options (PEM or JWK), newest first: read with node:crypto when the platform
 * is built, so a bad key is a ConfigurationError from `courierPlatform()` naming the key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { createPlatform } from '../../src/platform.js';
import { generateSigningKeyRing, keyRingOf, readSigningKey, type SigningKey } from '../../src/oauth/keys.js';

function read(input: unknown): SigningKey {
  const key = readSigningKey(input);
  if (typeof key === 'string') throw new Error(`unexpected problem: ${key}`);
  return key;
}

describe('signing keys', () => {
  it('a PEM key publishes its public half with a thumbprint kid (RFC 7638) and RS256', async () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const ring = keyRingOf([read(pem)]);
    const [published] = ring.jwks.keys;
    expect(published).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: ring.current.kid });
    expect(published).not.toHaveProperty('d');
    expect(ring.current.kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: published!.n!, e: published!.e! }));
    expect(ring.generated).toBe(false);
  });

  it('an EC key without a kid gets the same thumbprint jose computes', async () => {
    const jwk = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    const key = read(jwk);
    expect(key.alg).toBe('ES256');
    expect(key.kid).toBe(await calculateJwkThumbprint(jwk));
  });

  it('with several keys the newest RS256 key signs by default, the newest of another algorithm on request, and all are published (rotation)', async () => {
    const jwk = async (kid: string, alg: 'RS256' | 'ES256' | 'EdDSA') => ({ ...(await exportJWK((await generateKeyPair(alg, { extractable: true })).privateKey)), kid });
    const ring = keyRingOf([read(await jwk('ec', 'ES256')), read(await jwk('rsa-new', 'RS256')), read(await jwk('rsa-old', 'RS256')), read(await jwk('ed', 'EdDSA'))]);
    expect(ring.current.kid).toBe('rsa-new');
    expect(ring.forAlg('ES256')?.kid).toBe('ec');
    expect(ring.forAlg('EdDSA')?.kid).toBe('ed');
    expect(ring.forAlg('PS256')).toBeUndefined();
    expect(ring.jwks.keys.map((k) => k.kid)).toEqual(['ec', 'rsa-new', 'rsa-old', 'ed']);
  });

  it('OIDC Core 15.1: keys without an RS256 key are refused when the platform is built', async () => {
    const ec = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    const build = () => createPlatform({ courier: false, logger: silentLogger, oauth: { signingKeys: [ec] } });
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(/oauth\.signingKeys: needs an RS256 \(RSA\) key/);
  });

  it('a client asking for an algorithm no key signs is refused when the platform is built, naming the field', () => {
    const client = { id: 'app', secret: 'app-secret-1234', redirectUris: ['https://app.example/cb'], idTokenSigningAlg: 'ES256' as const };
    const build = () => createPlatform({ courier: false, logger: silentLogger, oauth: { clients: [client] } });
    expect(build).toThrow(/oauth\.clients\[0\]\.idTokenSigningAlg: no key in oauth\.signingKeys signs ES256/);
  });

  it('the same key gives the same browser-sealing secret as a PEM and as a JWK', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const fromPem = read(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const fromJwk = read(privateKey.export({ format: 'jwk' }));
    expect(fromPem.secret.equals(fromJwk.secret)).toBe(true);
  });

  it('without keys one is generated', async () => {
    const ring = await generateSigningKeyRing();
    expect(ring.generated).toBe(true);
    expect(ring.current.alg).toBe('RS256');
  });

  it.each<[string, () => Promise<unknown>, RegExp]>([
    ['a public JWK', async () => exportJWK((await generateKeyPair('RS256', { extractable: true })).publicKey), /no "d"/],
    ['a string that is not a PEM', async () => 'not a key', /PEM private key/],
    ['a truncated PEM', async () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().slice(0, 200), /not a usable private key/],
    ['a symmetric JWK', async () => ({ kty: 'oct', k: 'c2VjcmV0' }), /symmetric/],
    ['a 1024-bit RSA key', async () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'jwk' }), /1024 bits/],
    ['an alg the key cannot sign with', async () => ({ ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)), alg: 'RS256' }), /cannot sign with/],
  ])('describes what is wrong with %s', async (_, make, problem) => {
    expect(readSigningKey(await make())).toMatch(problem);
  });

  it('a duplicate kid is refused when the platform is built, naming the key', async () => {
    const key = { ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)), kid: 'same' };
    const build = () => createPlatform({ courier: false, logger: silentLogger, oauth: { signingKeys: [key, { ...key }] } });
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(/oauth\.signingKeys\[1\]: has the same kid \(same\) as signingKeys\[0\]/);
  });
});
