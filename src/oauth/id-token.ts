import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKey } from './keys.js';

export interface IdTokenInput {
  issuer: string;
  clientId: string;
  sub: string;
  claims: Record<string, unknown>;
  authTime: number;
  nonce?: string;
  accessToken: string;
  now: number;
  lifetimeSeconds: number;
}

/**
 * at_hash (OIDC Core 3.1.3.6): the left half of the hash of the access token, base64url. The
 * hash follows the signing algorithm's size (SHA-256 for RS256/ES256/PS256).
 */
export function atHash(accessToken: string, alg: string): string {
  const bits = alg === 'EdDSA' ? 512 : Number(alg.slice(2)) || 256;
  const digest = createHash(`sha${bits}`).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export async function signIdToken(key: SigningKey, input: IdTokenInput): Promise<string> {
  const iat = Math.floor(input.now / 1000);
  const payload: Record<string, unknown> = {
    ...input.claims,
    auth_time: input.authTime,
    at_hash: atHash(input.accessToken, key.alg),
  };
  if (input.nonce !== undefined) payload.nonce = input.nonce;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(input.issuer)
    .setSubject(input.sub)
    .setAudience(input.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + input.lifetimeSeconds)
    .sign(key.privateKey);
}
