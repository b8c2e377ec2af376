import { describe, expect, it } from 'vitest';
import { createSecretVerifier, hashClientSecret, isClientSecretHash, verifyClientSecret } from '../../src/oauth/client-secret.js';

describe('client secret hashing (scrypt, constant-time compare)', () => {
  it('hashes to the documented format and verifies only the right secret', async () => {
    const hash = await hashClientSecret('correct horse battery');
    expect(isClientSecretHash(hash)).toBe(true);
    expect(hash).not.toContain('correct horse battery');
    expect(await verifyClientSecret('correct horse battery', hash)).toBe(true);
    expect(await verifyClientSecret('correct horse batterY', hash)).toBe(false);
  });

  it('salts every hash: the same secret hashes differently twice', async () => {
    expect(await hashClientSecret('same-secret-1')).not.toBe(await hashClientSecret('same-secret-1'));
  });

  it('refuses short secrets and rejects a stored value that is not a hash', async () => {
    await expect(hashClientSecret('short')).rejects.toThrow(TypeError);
    expect(await verifyClientSecret('anything', 'plain-text-secret')).toBe(false);
  });
});

describe('createSecretVerifier: remembers successes only', () => {
  it('a wrong secret stays wrong after the right one was remembered', async () => {
    const verify = createSecretVerifier();
    const hash = await hashClientSecret('the-right-secret');
    expect(await verify('the-right-secret', hash)).toBe(true);
    expect(await verify('the-right-secret', hash)).toBe(true);
    expect(await verify('the-wrong-secret', hash)).toBe(false);
  });

  it('a rotated secret (new stored hash) is checked again: the old secret no longer passes', async () => {
    const verify = createSecretVerifier();
    const oldHash = await hashClientSecret('old-secret-value');
    const newHash = await hashClientSecret('new-secret-value');
    expect(await verify('old-secret-value', oldHash)).toBe(true);
    expect(await verify('old-secret-value', newHash)).toBe(false);
    expect(await verify('new-secret-value', newHash)).toBe(true);
  });
});
