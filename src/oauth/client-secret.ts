import { createHmac, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PREFIX = 'scrypt';
const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function derive(secret: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, KEY_LENGTH, { ...params, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * Hashes a client secret for configuration: `scrypt$N$r$p$salt$hash` (base64url). Store this, never
 * the secret.
 *
 * @example
 * import { hashClientSecret } from 'courier-platform';
 * const secretHash = await hashClientSecret(newSecret); // configure as oauth.clients[].secretHash
 */
export async function hashClientSecret(secret: string): Promise<string> {
  if (typeof secret !== 'string' || secret.length < 8) throw new TypeError('a client secret must be a string of at least 8 characters');
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, PARAMS);
  return [PREFIX, PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export function isClientSecretHash(value: string): boolean {
  const parts = value.split('$');
  return parts.length === 6 && parts[0] === PREFIX && parts.slice(1, 4).every((n) => /^\d+$/.test(n));
}

/** Constant-time check of a presented secret against a stored hash. */
export async function verifyClientSecret(secret: string, stored: string): Promise<boolean> {
  if (!isClientSecretHash(stored)) return false;
  const [, n, r, p, salt, hash] = stored.split('$') as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(secret, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export interface SecretVerifierOptions {
  /** How long a successful verification is remembered, in ms. Default 5 minutes. */
  ttlMs?: number;
  /** Most remembered verifications. Default 1000. */
  max?: number;
  now?: () => number;
}

/**
 * `verifyClientSecret` with a memory of recent successes. scrypt is slow on purpose (it is the
 * defence against a stolen hash), but paying it on every token request of a well-behaved client
 * caps the token endpoint at a few dozen calls per second. Only successes are remembered, keyed
 * by an HMAC under a per-process random key and by the stored hash, so a rotated secret misses.
 */
export function createSecretVerifier(options: SecretVerifierOptions = {}): (secret: string, stored: string) => Promise<boolean> {
  const ttlMs = options.ttlMs ?? 5 * 60_000;
  const max = options.max ?? 1000;
  const now = options.now ?? Date.now;
  const key = randomBytes(32);
  const remembered = new Map<string, number>();
  return async (secret, stored) => {
    const entry = createHmac('sha256', key).update(stored).update('\0').update(secret).digest('base64url');
    const until = remembered.get(entry);
    if (until !== undefined && until > now()) return true;
    const valid = await verifyClientSecret(secret, stored);
    remembered.delete(entry);
    if (valid) {
      remembered.set(entry, now() + ttlMs);
      // Insertion order makes the first key the oldest.
      if (remembered.size > max) remembered.delete(remembered.keys().next().value!);
    }
    return valid;
  };
}
