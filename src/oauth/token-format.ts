import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { BoundedCache } from '../core/cache.js';
import type { TokenRef } from './store/types.js';

/**
 * Codes and tokens are `<grantId>.<secret>`: opaque to clients, but the grant id lets a store keep
 * a grant's records together, and only the SHA-256 of the secret is ever stored.
 */
export function newGrantId(): string {
  return randomBytes(12).toString('base64url');
}

export function newToken(grantId: string): { value: string; ref: TokenRef } {
  return tokenOf(grantId, randomBytes(32));
}

/** The token a grant gives out with this 32-byte secret; only the secret's hash is stored. */
function tokenOf(grantId: string, secretBytes: Buffer): { value: string; ref: TokenRef } {
  const secret = secretBytes.toString('base64url');
  return { value: `${grantId}.${secret}`, ref: { grantId, hash: hashSecret(secret) } };
}

/**
 * A refresh token's secret is 16 random bytes and a 16-byte HMAC of them with its grant and
 * client, keyed with the platform's secret. A grant record remembers only its last refresh
 * tokens (EARLIER_REFRESH_TOKENS); the HMAC still proves that a token the record forgot was
 * issued for this grant to this client, so presenting it is a reuse however many refreshes came
 * since (RFC 9700 4.14.2), while nobody who merely knows a grant id (it opens every access token)
 * can make one.
 */
export function newRefreshToken(grantId: string, clientId: string, key: Buffer): { value: string; ref: TokenRef } {
  const nonce = randomBytes(16);
  return tokenOf(grantId, Buffer.concat([nonce, refreshMac(key, grantId, clientId, nonce)]));
}

/** Whether `value` is a refresh token issued for its grant to `clientId` under one of `keys` (newRefreshToken). */
export function issuedRefreshToken(value: string, clientId: string, keys: readonly Buffer[]): boolean {
  const match = FORMAT.exec(value);
  if (!match) return false;
  const bytes = Buffer.from(match[2]!, 'base64url');
  // Only the exact text issued: base64url's last character has bits that decode to nothing.
  if (bytes.toString('base64url') !== match[2]) return false;
  const nonce = bytes.subarray(0, 16);
  const mac = bytes.subarray(16);
  return keys.some((key) => timingSafeEqual(mac, refreshMac(key, match[1]!, clientId, nonce)));
}

function refreshMac(key: Buffer, grantId: string, clientId: string, nonce: Buffer): Buffer {
  return createHmac('sha256', key).update(JSON.stringify(['refresh_token', grantId, clientId])).update(nonce).digest().subarray(0, 16);
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

const FORMAT = /^([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;

/**
 * Recently parsed references. A token's reference never changes, so remembering it spares the
 * SHA-256 on the guard's hot path; the store is still asked every time, so revocation is immediate.
 * References are frozen, so the same object can be handed to every caller.
 */
const recent = new BoundedCache<string, TokenRef>({ max: 10_000 });

/** The store reference of a presented code or token, or undefined when it cannot be one of ours. */
export function parseToken(value: unknown): TokenRef | undefined {
  if (typeof value !== 'string') return undefined;
  const known = recent.get(value);
  if (known) return known;
  const match = FORMAT.exec(value);
  if (!match) return undefined;
  const ref: TokenRef = Object.freeze({ grantId: match[1]!, hash: hashSecret(match[2]!) });
  recent.set(value, ref);
  return ref;
}
