import { createHash, randomBytes } from 'node:crypto';
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
  const secret = randomBytes(32).toString('base64url');
  return { value: `${grantId}.${secret}`, ref: { grantId, hash: hashSecret(secret) } };
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
