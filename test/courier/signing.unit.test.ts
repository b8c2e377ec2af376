import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalString, hmacSha256Signer, md5Signer, resolveSigner, signaturesMatch } from '../../src/courier/signing.js';

interface Vector {
  name: string;
  secret: string;
  fields: Record<string, unknown>;
  canonical: string;
  md5: string;
  'hmac-sha256': string;
}

// The vectors docs/signing.md shows: fields, secret, canonical string and both signatures.
const fixture = fileURLToPath(new URL('../fixtures/signing-vectors.json', import.meta.url));
const vectors = JSON.parse(readFileSync(fixture, 'utf8')) as Vector[];

describe('upstream signing (docs/signing.md)', () => {
  it('has vectors to check against', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(3);
  });

  describe.each(vectors)('$name', (vector) => {
    it('builds the canonical string', () => {
      expect(canonicalString(vector.fields)).toBe(vector.canonical);
    });
    it('md5 preset matches', () => {
      expect(md5Signer(vector.fields, vector.secret)).toBe(vector.md5);
    });
    it('hmac-sha256 preset matches', () => {
      expect(hmacSha256Signer(vector.fields, vector.secret)).toBe(vector['hmac-sha256']);
    });
    it('ignores an existing sign field', () => {
      expect(md5Signer({ ...vector.fields, sign: 'WHATEVER' }, vector.secret)).toBe(vector.md5);
    });
  });

  it('a custom signer function replaces the presets', () => {
    const custom = resolveSigner((fields, secret) => `${Object.keys(fields).length}:${secret.length}`);
    expect(custom({ a: 1, b: 2 }, 'xyz')).toBe('2:3');
  });

  it('rejects an unknown preset name at configuration time, naming the option', () => {
    expect(() => resolveSigner('sha1' as never)).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_option', field: 'courier.signer', message: expect.stringContaining('"sha1"') }),
    );
  });

  it('compares signatures case-insensitively and rejects non-strings', () => {
    const sign = md5Signer({ api: 'x' }, 's');
    expect(signaturesMatch(sign.toLowerCase(), sign)).toBe(true);
    expect(signaturesMatch(sign, sign.toLowerCase())).toBe(true);
    expect(signaturesMatch(sign.slice(1), sign)).toBe(false);
    expect(signaturesMatch(42, sign)).toBe(false);
  });
});
