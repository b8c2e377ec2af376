import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type CryptoKey,
  type JWK,
  type KeyObject,
} from 'jose';

/** A private signing key as a PEM (PKCS#8) string or a private JWK. */
export type SigningKeyInput = string | JWK;

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey | KeyObject;
  /** The public half as published in the JWKS. */
  publicJwk: JWK;
  /** 32 bytes derived from the private key: a secret that every process sharing the key shares. */
  secret: Buffer;
}

export interface KeyRing {
  /** The newest key: it signs every id_token. */
  current: SigningKey;
  /** Every key, newest first: all of them are published so tokens signed before a rotation still verify. */
  all: SigningKey[];
  jwks: { keys: JWK[] };
  generated: boolean;
}

const PUBLIC_PARAMS = ['kty', 'n', 'e', 'crv', 'x', 'y'] as const;
const DEFAULT_ALG = 'RS256';

function algFor(jwk: JWK): string {
  if (jwk.alg) return jwk.alg;
  if (jwk.kty === 'RSA') return 'RS256';
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  throw new TypeError(`oauth.signingKeys: cannot choose an algorithm for a ${jwk.kty} key; set "alg" on the JWK`);
}

async function fromJwk(jwk: JWK): Promise<SigningKey> {
  if (!jwk.d) throw new TypeError('oauth.signingKeys: a JWK must be a private key (it has no "d")');
  const alg = algFor(jwk);
  const publicJwk: JWK = {};
  for (const param of PUBLIC_PARAMS) if (jwk[param] !== undefined) publicJwk[param] = jwk[param] as string;
  const kid = jwk.kid ?? (await calculateJwkThumbprint(publicJwk));
  const privateKey = await importJWK({ ...jwk, alg }, alg);
  if (privateKey instanceof Uint8Array) throw new TypeError('oauth.signingKeys: symmetric keys cannot sign id_tokens');
  const secret = createHash('sha256').update(`courier-platform:${jwk.d}`).digest();
  return { kid, alg, privateKey, publicJwk: { ...publicJwk, kid, alg, use: 'sig' }, secret };
}

async function fromInput(input: SigningKeyInput): Promise<SigningKey> {
  if (typeof input !== 'string') return fromJwk(input);
  if (!input.includes('-----BEGIN')) throw new TypeError('oauth.signingKeys: a string key must be a PEM (PKCS#8) private key');
  const key = await importPKCS8(input, DEFAULT_ALG, { extractable: true });
  return fromJwk(await exportJWK(key));
}

/**
 * Builds the key ring from configured keys (newest first). With none, generates an RSA key and
 * says so: tokens signed with it die with the process.
 */
export async function loadKeyRing(inputs: readonly SigningKeyInput[], warn: (message: string) => void): Promise<KeyRing> {
  let generated = false;
  let keys: SigningKey[];
  if (inputs.length === 0) {
    warn('oauth.signingKeys is not set: generated a signing key; id_tokens will not verify after a restart and other processes cannot share it');
    const { privateKey } = await generateKeyPair(DEFAULT_ALG, { extractable: true, modulusLength: 2048 });
    keys = [await fromJwk(await exportJWK(privateKey))];
    generated = true;
  } else {
    keys = await Promise.all(inputs.map(fromInput));
  }
  const kids = new Set(keys.map((k) => k.kid));
  if (kids.size !== keys.length) throw new TypeError('oauth.signingKeys: two keys have the same kid');
  return { current: keys[0]!, all: keys, jwks: { keys: keys.map((k) => k.publicJwk) }, generated };
}
