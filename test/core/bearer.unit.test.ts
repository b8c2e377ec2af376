import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../src/core/bearer.js';
import type { PlatformRequest } from '../../src/core/http.js';

const withAuthorization = (value: string | string[] | undefined): PlatformRequest => ({
  method: 'GET',
  path: '/openapi/v1/ping',
  query: new URLSearchParams(),
  headers: { authorization: value },
});
const read = (value: string | string[] | undefined) => bearerToken(withAuthorization(value));

describe('RFC 6750 2.1: the Authorization request header field', () => {
  it('reads b64token, its trailing "=" included, after one or more spaces', () => {
    expect(read('Bearer abc.DEF-_~+/09')).toBe('abc.DEF-_~+/09');
    expect(read('Bearer   tok==')).toBe('tok==');
    expect(read('Bearer tok  ')).toBe('tok');
  });

  it('takes the scheme name in any case (RFC 9110 11.1)', () => {
    expect(read('bearer tok')).toBe('tok');
    expect(read('BEARER tok')).toBe('tok');
    expect(read('bEaReR tok')).toBe('tok');
  });

  it('has no Bearer credentials for another scheme or no header', () => {
    expect(read(undefined)).toBeUndefined();
    expect(read('')).toBeUndefined();
    expect(read('Basic dXNlcjpwYXNz')).toBeUndefined();
    expect(read('Bearerx tok')).toBeUndefined();
    expect(read('Bearer\ttok')).toBeUndefined();
    expect(read('Bear')).toBeUndefined();
    // Letters only match letters: "Bearer" with each letter's neighbours below 0x41 is another scheme.
    expect(read('B%arer tok')).toBeUndefined();
  });

  it('calls malformed Bearer credentials malformed ("")', () => {
    expect(read('Bearer')).toBe('');
    expect(read('Bearer    ')).toBe('');
    expect(read('Bearer two tokens')).toBe('');
    expect(read('Bearer =tok')).toBe('');
    expect(read('Bearer tok=x')).toBe('');
    expect(read('Bearer tök')).toBe('');
    expect(read('Bearer tok,')).toBe('');
  });

  it('reads the first of repeated headers', () => {
    expect(read(['Bearer first', 'Bearer second'])).toBe('first');
  });
});
