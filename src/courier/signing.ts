import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { configurationError } from '../core/errors.js';

/** Every field of the upstream body except `sign`, including api, appId and version. */
export type SignFields = Readonly<Record<string, unknown>>;

/** Computes the upstream `sign` from the fields and the app secret. */
export type Signer = (fields: SignFields, appSecret: string) => string;

export type SignerOption = 'md5' | 'hmac-sha256' | Signer;

function renderValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * The canonical string the courier platform signs (docs/signing.md): drop `sign` and empty values
 * (null, undefined, ''), sort keys by code unit, render objects as compact JSON, join as `k=v&k=v`.
 */
export function canonicalString(fields: SignFields): string {
  return Object.keys(fields)
    .filter((key) => {
      const value = fields[key];
      return key !== 'sign' && value !== null && value !== undefined && value !== '';
    })
    .sort()
    .map((key) => `${key}=${renderValue(fields[key])}`)
    .join('&');
}

export const md5Signer: Signer = (fields, appSecret) =>
  createHash('md5').update(`${canonicalString(fields)}&key=${appSecret}`, 'utf8').digest('hex').toUpperCase();

export const hmacSha256Signer: Signer = (fields, appSecret) =>
  createHmac('sha256', appSecret).update(canonicalString(fields), 'utf8').digest('hex').toUpperCase();

/** `field` is where the caller wrote the option: `courier.signer`, or the sandbox's `signer`. */
export function resolveSigner(option: SignerOption = 'md5', field = 'courier.signer'): Signer {
  if (typeof option === 'function') return option;
  if (option === 'md5') return md5Signer;
  if (option === 'hmac-sha256') return hmacSha256Signer;
  throw configurationError('invalid_option', field, `must be 'md5', 'hmac-sha256' or a function, got ${JSON.stringify(option)}`);
}

/**
 * Constant-time comparison of a received signature with the expected one, both in upper case: a
 * hexadecimal sign may come in either case, and a custom signer may answer lower-case hex.
 */
export function signaturesMatch(received: unknown, expected: string): boolean {
  if (typeof received !== 'string') return false;
  const a = Buffer.from(received.toUpperCase(), 'utf8');
  const b = Buffer.from(expected.toUpperCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
