import { describe, expect, it } from 'vitest';
import { readBasicAuth } from '../../src/core/basic-auth.js';
import type { PlatformRequest } from '../../src/core/http.js';

const withAuthorization = (value: string | undefined): PlatformRequest => ({
  method: 'POST',
  path: '/oauth/token',
  query: new URLSearchParams(),
  headers: { authorization: value },
});
const basicOf = (bytes: Buffer) => readBasicAuth(withAuthorization(`Basic ${bytes.toString('base64')}`));

describe('RFC 7617 2: Authorization: Basic', () => {
  it('reads user and password, the password with every colon after the first', () => {
    expect(basicOf(Buffer.from('app:se:cret'))).toEqual({ kind: 'basic', user: 'app', password: 'se:cret' });
    expect(basicOf(Buffer.from('äpp:pässwörd'))).toEqual({ kind: 'basic', user: 'äpp', password: 'pässwörd' });
  });

  it('2.1: bytes that are not UTF-8 are malformed, not read with U+FFFD in their place', () => {
    expect(basicOf(Buffer.concat([Buffer.from('app:'), Buffer.from([0xff, 0xfe])]))).toMatchObject({ kind: 'malformed' });
    expect(basicOf(Buffer.from([0xc3, 0x28, 0x3a, 0x61]))).toMatchObject({ kind: 'malformed' });
  });

  it('2.1: a leading byte order mark is part of the user, so two byte sequences never read as one credential', () => {
    const withMark = basicOf(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('app:secret')]));
    expect(withMark).toEqual({ kind: 'basic', user: '\uFEFFapp', password: 'secret' });
  });

  it('another scheme is no Basic Auth; a Basic header without user:password is malformed', () => {
    expect(readBasicAuth(withAuthorization('Bearer abc'))).toEqual({ kind: 'none' });
    expect(readBasicAuth(withAuthorization(undefined))).toEqual({ kind: 'none' });
    expect(basicOf(Buffer.from('nocolon'))).toMatchObject({ kind: 'malformed' });
    expect(basicOf(Buffer.from(':secret'))).toMatchObject({ kind: 'malformed' });
  });
});
