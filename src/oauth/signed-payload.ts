import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A tamper-proof, expiring payload for round trips through the browser (the consent form, the
 * login return address). HMAC-SHA256 with a key every process of the platform shares.
 */
export function seal(secret: Buffer, purpose: string, payload: object, expiresAtSeconds: number): string {
  const body = Buffer.from(JSON.stringify({ ...payload, _p: purpose, _e: expiresAtSeconds })).toString('base64url');
  return `${body}.${mac(secret, body)}`;
}

export function unseal<T>(secret: Buffer, purpose: string, value: unknown, nowSeconds: number): T | undefined {
  if (typeof value !== 'string') return undefined;
  const dot = value.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const body = value.slice(0, dot);
  // The MAC's text is compared, not its decoded bytes: base64url decoding ignores a last
  // character's spare bits, and only the one canonical spelling of the MAC is accepted.
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(mac(secret, body));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { _p?: string; _e?: number };
    if (parsed._p !== purpose || typeof parsed._e !== 'number' || parsed._e < nowSeconds) return undefined;
    return parsed as T;
  } catch {
    return undefined;
  }
}

function mac(secret: Buffer, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64url');
}
