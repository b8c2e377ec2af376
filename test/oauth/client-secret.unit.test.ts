import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { createSecretVerifier, hashClientSecret, isClientSecretHash, secretHashProblem, verifyClientSecret } from '../../src/oauth/client-secret.js';

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
    await expect(hashClientSecret('short')).rejects.toThrow(ConfigurationError);
    await expect(hashClientSecret('short')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await verifyClientSecret('anything', 'plain-text-secret')).toBe(false);
  });
});

describe('secretHashProblem: what is wrong with a configured hash', () => {
  const salt = 'A'.repeat(22);
  const hash = 'B'.repeat(43);

  it('accepts what hashClientSecret() makes, with any cost it can verify', async () => {
    expect(secretHashProblem(await hashClientSecret('a-good-secret'))).toBeUndefined();
    expect(secretHashProblem(`scrypt$256$8$1$${salt}$${hash}`)).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    ['not a string', 42, /must be a hash from hashClientSecret/],
    ['a shell-expanded hash ("$16384" read as "$1" + "6384")', 'scrypt6384', /single quotes/],
    ['a hash with a part missing', `scrypt$16384$8$${salt}$${hash}`, /4 "\$" separators instead of 5/],
    ['another algorithm', `bcrypt$16384$8$1$${salt}$${hash}`, /does not start with scrypt\$/],
    ['the plain secret', 'the-client-secret', /looks like a secret, not its hash: give a plain secret as `secret`.*hash-secret/],
    ['a cost that is not a number', `scrypt$N$8$1$${salt}$${hash}`, /positive integers/],
    ['a cost that is not a power of two', `scrypt$1000$8$1$${salt}$${hash}`, /power of two/],
    ['a cost scrypt would refuse for memory', `scrypt$1048576$8$1$${salt}$${hash}`, /MiB/],
    ['a salt that is not base64url', `scrypt$16384$8$1$not base64$${hash}`, /salt/],
    ['a truncated hash part', `scrypt$16384$8$1$${salt}$${hash.slice(0, 20)}`, /32 bytes/],
  ])('refuses %s', (_, value, problem) => {
    expect(secretHashProblem(value)).toMatch(problem);
  });
});

/** A valid hash at the lowest cost scrypt takes, so a test can verify thousands of clients quickly. */
function cheapHash(secret: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(secret, salt, 32, { N: 2, r: 1, p: 1 });
  return ['scrypt', 2, 1, 1, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

describe('createSecretVerifier: remembers successes only', () => {
  it('a wrong secret stays wrong after the right one was remembered', async () => {
    const secrets = createSecretVerifier();
    const hash = await hashClientSecret('the-right-secret');
    expect(secrets.remembers('the-right-secret', hash)).toBe(false);
    expect(await secrets.verify('the-right-secret', hash)).toBe(true);
    expect(secrets.remembers('the-right-secret', hash)).toBe(true);
    expect(await secrets.verify('the-right-secret', hash)).toBe(true);
    expect(await secrets.verify('the-wrong-secret', hash)).toBe(false);
    expect(secrets.remembers('the-wrong-secret', hash)).toBe(false);
  });

  it('forgets a success after ttlMs', async () => {
    let now = 0;
    const secrets = createSecretVerifier({ ttlMs: 1000, now: () => now });
    const hash = await hashClientSecret('the-right-secret');
    await secrets.verify('the-right-secret', hash);
    now = 999;
    expect(secrets.remembers('the-right-secret', hash)).toBe(true);
    now = 1000;
    expect(secrets.remembers('the-right-secret', hash)).toBe(false);
  });

  it('a rotated secret (new stored hash) is checked again: the old secret no longer passes', async () => {
    const { verify } = createSecretVerifier();
    const oldHash = await hashClientSecret('old-secret-value');
    const newHash = await hashClientSecret('new-secret-value');
    expect(await verify('old-secret-value', oldHash)).toBe(true);
    expect(await verify('old-secret-value', newHash)).toBe(false);
    expect(await verify('new-secret-value', newHash)).toBe(true);
  });

  it('past 1,000 other clients, the secret of the active one is still remembered: no scrypt again', async () => {
    const secrets = createSecretVerifier();
    const active = cheapHash('the-active-secret');
    expect(await secrets.verify('the-active-secret', active)).toBe(true);
    for (let i = 0; i < 1_500; i++) {
      const secret = `client-${i}-secret`;
      expect(await secrets.verify(secret, cheapHash(secret))).toBe(true);
      if (i % 100 === 0) expect(secrets.remembers('the-active-secret', active)).toBe(true);
    }
    expect(secrets.remembers('the-active-secret', active)).toBe(true);
  });

  it('at its bound, lets the least recently used client go first, not the active one', async () => {
    const secrets = createSecretVerifier({ max: 2 });
    const [active, idle, fresh] = ['active-secret', 'idle--secret', 'fresh-secret'].map((secret) => ({ secret, hash: cheapHash(secret) }));
    await secrets.verify(active!.secret, active!.hash);
    await secrets.verify(idle!.secret, idle!.hash);
    expect(secrets.remembers(active!.secret, active!.hash)).toBe(true);
    await secrets.verify(fresh!.secret, fresh!.hash);
    expect(secrets.remembers(idle!.secret, idle!.hash)).toBe(false);
    expect(secrets.remembers(active!.secret, active!.hash)).toBe(true);
    expect(secrets.remembers(fresh!.secret, fresh!.hash)).toBe(true);
  });
});
