import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { loadKeyRing } from '../../src/oauth/keys.js';
import { createLoginThrottle } from '../../src/oauth/throttle.js';

describe('signing keys from options (PEM or JWK), newest first', () => {
  it('a PEM key publishes its public half with a thumbprint kid and RS256', async () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const ring = await loadKeyRing([pem], () => {});
    const [published] = ring.jwks.keys;
    expect(published).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: ring.current.kid });
    expect(published).not.toHaveProperty('d');
    expect(ring.current.kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: published!.n!, e: published!.e! }));
    expect(ring.generated).toBe(false);
  });

  it('with several keys the first signs and all are published (rotation)', async () => {
    const jwk = async (kid: string, alg: 'RS256' | 'ES256') => ({ ...(await exportJWK((await generateKeyPair(alg, { extractable: true })).privateKey)), kid });
    const ring = await loadKeyRing([await jwk('new', 'ES256'), await jwk('old', 'RS256')], () => {});
    expect(ring.current.kid).toBe('new');
    expect(ring.current.alg).toBe('ES256');
    expect(ring.jwks.keys.map((k) => k.kid)).toEqual(['new', 'old']);
  });

  it('without keys it generates one and says so', async () => {
    const warnings: string[] = [];
    const ring = await loadKeyRing([], (message) => warnings.push(message));
    expect(ring.generated).toBe(true);
    expect(ring.current.alg).toBe('RS256');
    expect(warnings.join()).toMatch(/generated a signing key/);
  });

  it('refuses public keys, non-PEM strings and duplicate kids with a TypeError', async () => {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    await expect(loadKeyRing([await exportJWK(publicKey)], () => {})).rejects.toThrow(TypeError);
    await expect(loadKeyRing(['not a key'], () => {})).rejects.toThrow(TypeError);
    const key = { ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)), kid: 'same' };
    await expect(loadKeyRing([key, { ...key }], () => {})).rejects.toThrow(/same kid/);
  });
});

describe('createLoginThrottle: failed logins per user name and per IP', () => {
  it('blocks a user name after its failures, from any IP, with the seconds to wait', async () => {
    const logins = createLoginThrottle({ failures: 3, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      expect(await logins.check('Demo', `10.0.0.${i}`)).toBe(0);
      await logins.failed('Demo', `10.0.0.${i}`);
    }
    const wait = await logins.check('demo', '10.0.0.99');
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
  });

  it('blocks an IP that tries many user names', async () => {
    const logins = createLoginThrottle({ failures: 3, windowSeconds: 60 });
    for (const user of ['a', 'b', 'c']) await logins.failed(user, '192.0.2.7');
    expect(await logins.check('someone-else', '192.0.2.7')).toBeGreaterThan(0);
    expect(await logins.check('someone-else', '192.0.2.8')).toBe(0);
  });

  it('a successful login clears the user name, not the IP', async () => {
    const logins = createLoginThrottle({ failures: 2, windowSeconds: 60 });
    await logins.failed('demo', '198.51.100.1');
    await logins.succeeded('demo');
    await logins.failed('demo', '198.51.100.2');
    expect(await logins.check('demo', '198.51.100.3')).toBe(0);
  });
});
