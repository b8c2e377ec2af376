/**
 * What a client's record decides about a token (docs/operator.md#applications): the unit view of
 * the gate the endpoints read codes and tokens through; test/admin/clients.test.ts and
 * test/oauth/configured-clients.test.ts check the same through HTTP.
 */
import { describe, expect, it } from 'vitest';
import { servedToken } from '../../src/oauth/client-status.js';
import type { OAuthClientRecord } from '../../src/oauth/store/types.js';

const HOUR = 3_600_000;
const RESUMED_AT = Date.UTC(2031, 4, 12, 9, 0, 0);
const client: OAuthClientRecord = {
  id: 'shop',
  name: 'Shop',
  redirectUris: ['https://shop.example/cb'],
  scopes: ['openid', 'profile', 'offline_access'],
  grants: ['authorization_code', 'refresh_token'],
};
/** An access token of an hour's lifetime issued at `issuedAt`. */
const token = (issuedAt: number, scope = ['openid', 'profile']) => ({ clientId: 'shop', scope, expiresAt: issuedAt + HOUR });

describe('servedToken', () => {
  it('serves the very token while the client is active and has every scope of it', () => {
    const live = token(RESUMED_AT);
    expect(servedToken(live, client, HOUR)).toBe(live);
    expect(servedToken(live, { ...client, status: 'active' }, HOUR)).toBe(live);
  });

  it('serves nothing for an unknown or suspended client', () => {
    expect(servedToken(token(RESUMED_AT), undefined, HOUR)).toBeUndefined();
    expect(servedToken(token(RESUMED_AT), { ...client, status: 'suspended' }, HOUR)).toBeUndefined();
  });

  it('serves nothing issued before tokensValidAfter, judging the issue time as expiry less the lifetime', () => {
    const resumed = { ...client, tokensValidAfter: RESUMED_AT };
    expect(servedToken(token(RESUMED_AT - 1), resumed, HOUR)).toBeUndefined();
    expect(servedToken(token(RESUMED_AT), resumed, HOUR)).toBeDefined();
    // A refresh token of 30 days, issued a day before the resume.
    const month = 30 * 24 * HOUR;
    expect(servedToken({ clientId: 'shop', scope: ['openid'], expiresAt: RESUMED_AT - 24 * HOUR + month }, resumed, month)).toBeUndefined();
  });

  it('RFC 6749 6: cuts the scope to what the client has now, keeping the rest of the record', () => {
    const wide = { ...token(RESUMED_AT, ['openid', 'email', 'profile']), consumed: false };
    expect(servedToken(wide, client, HOUR)).toEqual({ ...wide, scope: ['openid', 'profile'] });
    expect(wide.scope).toEqual(['openid', 'email', 'profile']);
  });
});
