import { constants, createHash, sign, type KeyObject, type SignKeyObjectInput } from 'node:crypto';
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

/**
 * How node:crypto signs for each JWS algorithm (RFC 7518 3.1): the digest, and for the key the
 * padding (RSASSA-PSS with a salt as long as the digest, RFC 7518 3.5) or the signature encoding
 * (ECDSA as the raw R || S pair, RFC 7518 3.4). EdDSA names no digest (RFC 8037 3.1).
 */
function signerOf(alg: string, privateKey: KeyObject): { digest: string | null; key: SignKeyObjectInput } {
  const bits = alg.slice(2);
  switch (alg.slice(0, 2)) {
    case 'RS':
      return { digest: `sha${bits}`, key: { key: privateKey, padding: constants.RSA_PKCS1_PADDING } };
    case 'PS':
      return { digest: `sha${bits}`, key: { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } };
    case 'ES':
      return { digest: `sha${bits}`, key: { key: privateKey, dsaEncoding: 'ieee-p1363' } };
    default:
      return { digest: null, key: { key: privateKey } };
  }
}

/** The signer and the encoded protected header of each key, made once: every id_token needs them. */
const prepared = new WeakMap<SigningKey, { header: string; digest: string | null; key: SignKeyObjectInput }>();

function preparedFor(key: SigningKey) {
  let entry = prepared.get(key);
  if (!entry) {
    const header = Buffer.from(JSON.stringify({ alg: key.alg, kid: key.kid, typ: 'JWT' })).toString('base64url');
    entry = { header, ...signerOf(key.alg, key.privateKey) };
    prepared.set(key, entry);
  }
  return entry;
}

/**
 * A JWS Compact Serialization (RFC 7515 7.1) of the id_token's claims. The signature is made on
 * libuv's thread pool (node:crypto's `sign` with a callback), so the event loop goes on serving
 * while an RSA key signs.
 */
export async function signIdToken(key: SigningKey, input: IdTokenInput): Promise<string> {
  const iat = Math.floor(input.now / 1000);
  const payload: Record<string, unknown> = {
    ...input.claims,
    auth_time: input.authTime,
    at_hash: atHash(input.accessToken, key.alg),
    iss: input.issuer,
    sub: input.sub,
    aud: input.clientId,
    iat,
    exp: iat + input.lifetimeSeconds,
  };
  if (input.nonce !== undefined) payload.nonce = input.nonce;
  const signer = preparedFor(key);
  const signingInput = `${signer.header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const signature = await new Promise<Buffer>((resolve, reject) => {
    sign(signer.digest, Buffer.from(signingInput), signer.key, (error, result) => (error ? reject(error) : resolve(result)));
  });
  return `${signingInput}.${signature.toString('base64url')}`;
}
