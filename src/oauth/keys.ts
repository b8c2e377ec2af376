/**
 * The keys that sign id_tokens. A configured key is read with node:crypto, synchronously, so a
 * bad one is reported by `courierPlatform()` itself, naming the key; only a generated key (none
 * configured) is made asynchronously, while the platform starts.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, type JsonWebKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { JWK } from 'jose';
import { isPlainObject } from '../core/plain-object.js';

/** A private signing key as a PEM string (PKCS#8, PKCS#1 or SEC1) or a private JWK. */
export type SigningKeyInput = string | JWK;

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: KeyObject;
  /** The public half as published in the JWKS. */
  publicJwk: JWK;
  /** 32 bytes derived from the private key: a secret that every process sharing the key shares. */
  secret: Buffer;
}

export interface KeyRing {
  /** The newest RS256 key: it signs every id_token but those of a client that asked for another algorithm. */
  current: SigningKey;
  /** The newest key of an algorithm, for a client registered with `idTokenSigningAlg`. */
  forAlg(alg: string): SigningKey | undefined;
  /** Every key, newest first: all of them are published so tokens signed before a rotation still verify. */
  all: SigningKey[];
  jwks: { keys: JWK[] };
  generated: boolean;
}

const RSA_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
/** The algorithms a key of each type (and curve) may sign with; the first is the default. */
const ALGS_BY_TYPE: Record<string, readonly string[]> = {
  RSA: RSA_ALGS,
  'EC P-256': ['ES256'],
  'EC P-384': ['ES384'],
  'EC P-521': ['ES512'],
  'OKP Ed25519': ['EdDSA'],
};
/** RFC 7638: the members of each key type's thumbprint, in lexicographic order. */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = { RSA: ['e', 'kty', 'n'], EC: ['crv', 'kty', 'x', 'y'], OKP: ['crv', 'kty', 'x'] };
const MIN_RSA_BITS = 2048;

type NodeJwk = Record<string, unknown>;

function thumbprint(publicJwk: NodeJwk): string {
  const members = THUMBPRINT_MEMBERS[String(publicJwk.kty)] ?? [];
  const canonical = JSON.stringify(Object.fromEntries(members.map((name) => [name, publicJwk[name]])));
  return createHash('sha256').update(canonical).digest('base64url');
}

function importKey(input: unknown): KeyObject | string {
  try {
    if (typeof input === 'string') {
      if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(input)) return 'must be a PEM private key ("-----BEGIN PRIVATE KEY-----") or a private JWK';
      return createPrivateKey(input);
    }
    if (!isPlainObject(input)) return 'must be a PEM string or a private JWK object';
    if (input.kty === 'oct') return 'is a symmetric key; id_tokens are signed with a private RSA, EC or Ed25519 key';
    if (typeof input.d !== 'string') return 'is a public JWK (it has no "d"); give the private key';
    return createPrivateKey({ key: input as JsonWebKey, format: 'jwk' });
  } catch (error) {
    // node:crypto's message says what is wrong with the key material; it never contains the key.
    return `is not a usable private key (${(error as Error).message})`;
  }
}

/** Reads one configured key; answers a description of the problem instead when it is unusable. */
export function readSigningKey(input: unknown): SigningKey | string {
  const privateKey = importKey(input);
  if (typeof privateKey === 'string') return privateKey;
  return signingKeyOf(privateKey, isPlainObject(input) ? input : {});
}

/** `given` is the configured JWK (its alg, kid and d are kept), or empty for a PEM key. */
function signingKeyOf(privateKey: KeyObject, given: NodeJwk): SigningKey | string {
  if (privateKey.type !== 'private') return 'is not a private key';
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as NodeJwk;
  const type = publicJwk.kty === 'RSA' ? 'RSA' : `${String(publicJwk.kty)} ${String(publicJwk.crv)}`;
  const allowed = ALGS_BY_TYPE[type];
  if (!allowed) return `is a ${type} key; use an RSA (2048 bits or more), EC P-256/P-384/P-521 or Ed25519 key`;
  const bits = privateKey.asymmetricKeyDetails?.modulusLength;
  if (type === 'RSA' && (bits ?? 0) < MIN_RSA_BITS) return `is an RSA key of ${bits} bits; use at least ${MIN_RSA_BITS}`;
  const alg = typeof given.alg === 'string' ? given.alg : allowed[0]!;
  if (!allowed.includes(alg)) return `has "alg": "${alg}", which a ${type} key cannot sign with; use ${allowed.join(', ')}`;
  const kid = typeof given.kid === 'string' && given.kid !== '' ? given.kid : thumbprint(publicJwk);
  // The private JWK's "d" as configured (or as node:crypto exports a PEM key): every process sharing the key derives the same secret.
  const d = typeof given.d === 'string' ? given.d : String((privateKey.export({ format: 'jwk' }) as NodeJwk).d);
  const secret = createHash('sha256').update(`courier-platform:${d}`).digest();
  return { kid, alg, privateKey, publicJwk: { ...(publicJwk as JWK), kid, alg, use: 'sig' }, secret };
}

/** The algorithm every relying party can verify (OIDC Core 15.1), and the default one. */
export const DEFAULT_ALG = 'RS256';

/** The ring over keys newest first; at least one of them is an RS256 key (the options check it). */
export function keyRingOf(keys: readonly SigningKey[], generated = false): KeyRing {
  const forAlg = (alg: string) => keys.find((key) => key.alg === alg);
  return { current: forAlg(DEFAULT_ALG) ?? keys[0]!, forAlg, all: [...keys], jwks: { keys: keys.map((k) => k.publicJwk) }, generated };
}

const generateRsa = promisify(generateKeyPair);

/** A fresh RSA key, for when none is configured: tokens signed with it die with the process. */
export async function generateSigningKeyRing(): Promise<KeyRing> {
  const { privateKey } = await generateRsa('rsa', { modulusLength: MIN_RSA_BITS });
  // A fresh 2048-bit RSA key meets every condition signingKeyOf checks.
  return keyRingOf([signingKeyOf(privateKey, {}) as SigningKey], true);
}
