import { createHmac, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { BoundedCache } from '../core/cache.js';
import { configurationError } from '../core/errors.js';

const PREFIX = 'scrypt';
const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function derive(secret: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, KEY_LENGTH, { ...params, maxmem: MAX_MEMORY }, (error, key) =>
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
  if (typeof secret !== 'string' || secret.length < 8) {
    throw configurationError('invalid_argument', 'secret', 'a client secret must be a string of at least 8 characters');
  }
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, PARAMS);
  return [PREFIX, PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * Why a value is not a usable `hashClientSecret()` hash, or undefined when it is. Checked when a
 * client is configured, so a hash mangled on its way into the configuration (a shell expanding
 * `$16384` in a double-quoted string, say) fails at start rather than at the first token request.
 */
export function secretHashProblem(value: unknown): string | undefined {
  const expected = 'must be a hash from hashClientSecret() (scrypt$N$r$p$salt$hash)';
  if (typeof value !== 'string') return expected;
  const parts = value.split('$');
  // A shell expands "$16384" inside double quotes: the usual way a hash gets mangled.
  const shell = 'in a shell or .env file, quote it in single quotes so "$" is not expanded';
  // No "$" at all and not even the prefix: the secret itself, written where its hash belongs.
  if (parts.length === 1 && !value.startsWith(PREFIX)) {
    return `${expected}; it looks like a secret, not its hash: give a plain secret as \`secret\` (hashed at start), or store what \`npx courier-platform hash-secret\` prints`;
  }
  if (parts[0] !== PREFIX) return `${expected}; it does not start with ${PREFIX}$ (${shell})`;
  if (parts.length !== 6) return `${expected}; it has ${parts.length - 1} "$" separators instead of 5 (${shell})`;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  if (![n, r, p].every((x) => /^[1-9]\d{0,9}$/.test(x))) return `${expected}; N, r and p must be positive integers`;
  const cost = Number(n);
  if (128 * cost * Number(r) > MAX_MEMORY) return `${expected}; N and r need more than ${MAX_MEMORY / 1024 / 1024} MiB`;
  if ((cost & (cost - 1)) !== 0 || cost < 2) return `${expected}; N must be a power of two`;
  if (!BASE64URL.test(salt)) return `${expected}; the salt is not base64url`;
  if (!BASE64URL.test(hash) || Buffer.from(hash, 'base64url').length !== KEY_LENGTH) return `${expected}; the hash part is not ${KEY_LENGTH} bytes of base64url`;
  return undefined;
}

export function isClientSecretHash(value: string): boolean {
  return secretHashProblem(value) === undefined;
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
  /** Most remembered verifications; past it the least recently used goes first. Default 10,000. */
  max?: number;
  now?: () => number;
}

/**
 * `verifyClientSecret` with a memory of recent successes. scrypt is slow on purpose (it is the
 * defence against a stolen hash), but paying it on every token request of a well-behaved client
 * caps the token endpoint at a few dozen calls per second. Only successes are remembered, keyed
 * by an HMAC under a per-process random key and by the stored hash, so a rotated secret misses.
 */
export interface SecretVerifier {
  /** Whether `secret` matches the stored hash: remembered, or checked with scrypt. */
  verify(secret: string, stored: string): Promise<boolean>;
  /** Whether this process verified `secret` against `stored` recently: no scrypt, no promise. */
  remembers(secret: string, stored: string): boolean;
}

export function createSecretVerifier(options: SecretVerifierOptions = {}): SecretVerifier {
  const remembered = new BoundedCache<string, true>({ max: options.max ?? 10_000, ttlMs: options.ttlMs ?? 5 * 60_000, now: options.now });
  const key = randomBytes(32);
  const entryOf = (secret: string, stored: string) => createHmac('sha256', key).update(stored).update('\0').update(secret).digest('base64url');
  const remembers = (entry: string) => remembered.get(entry) === true;
  return {
    remembers: (secret, stored) => remembers(entryOf(secret, stored)),
    async verify(secret, stored) {
      const entry = entryOf(secret, stored);
      if (remembers(entry)) return true;
      const valid = await verifyClientSecret(secret, stored);
      if (valid) remembered.set(entry, true);
      return valid;
    },
  };
}
