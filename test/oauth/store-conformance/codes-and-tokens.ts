/**
 * OAuthStore conformance. Authorization codes, the first tokens of a grant, access tokens and
 * client_credentials tokens: found until they expire, used once, kept apart.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClientTokenRecord, OAuthStore } from '../../../src/oauth/store/types.js';
import { accessToken, accessView, BASE_TIME, codeRecord, type ConformanceSuite, fakeHash, fresh, HOUR, issueGrant, MINUTE, nextTokens, ref, refreshToken, refreshView, winners } from './fixtures.js';

export function describeCodeAndTokenConformance(suite: ConformanceSuite): void {
  const { clock } = suite;
  let store: OAuthStore;
  beforeAll(() => {
    ({ store } = suite);
  });

  describe('authorization codes', () => {
    it('finds a saved code, not yet consumed', async () => {
      const code = codeRecord(fresh('grant'));
      await store.saveCode(code);
      expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: false });
    });

    it('answers undefined for an unknown hash or the right hash under another grant', async () => {
      const code = codeRecord(fresh('grant'));
      await store.saveCode(code);
      expect(await store.findCode({ grantId: code.ref.grantId, hash: fakeHash() })).toBeUndefined();
      expect(await store.findCode({ grantId: fresh('grant'), hash: code.ref.hash })).toBeUndefined();
      expect(await store.consumeCode({ grantId: fresh('grant'), hash: code.ref.hash })).toBe(false);
    });

    it('lets exactly one of 20 concurrent callers consume a code', async () => {
      const code = codeRecord(fresh('grant'));
      await store.saveCode(code);
      expect(await winners(20, () => store.consumeCode(code.ref))).toBe(1);
      expect(await store.consumeCode(code.ref)).toBe(false);
    });

    it('keeps a consumed code as a tombstone with consumed: true until it expires', async () => {
      const code = codeRecord(fresh('grant'));
      await store.saveCode(code);
      expect(await store.consumeCode(code.ref)).toBe(true);
      expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: true });
      clock.now = code.expiresAt;
      expect(await store.findCode(code.ref)).toBeUndefined();
    });

    it('finds an exchanged code past its expiry while a token of its grant lives, so a late replay can end the grant (RFC 6749 4.1.2)', async () => {
      const withAccess = await issueGrant(store, { refresh: false });
      const withRefresh = await issueGrant(store);
      clock.now = withAccess.code.expiresAt + 10 * MINUTE;
      expect(await store.findCode(withAccess.code.ref)).toStrictEqual({ ...withAccess.code, consumed: true });
      expect(await store.findCode(withRefresh.code.ref)).toStrictEqual({ ...withRefresh.code, consumed: true });
      expect(await store.consumeCode(withAccess.code.ref)).toBe(false);
      clock.now = withAccess.access.expiresAt;
      expect(await store.findCode(withAccess.code.ref)).toBeUndefined();
      expect(await store.findCode(withRefresh.code.ref)).toStrictEqual({ ...withRefresh.code, consumed: true });
      clock.now = withRefresh.refresh!.expiresAt;
      expect(await store.findCode(withRefresh.code.ref)).toBeUndefined();
    });

    it('neither finds nor consumes a code once the clock reaches expiresAt', async () => {
      const code = codeRecord(fresh('grant'));
      await store.saveCode(code);
      clock.now = code.expiresAt - 1;
      expect(await store.findCode(code.ref)).toBeDefined();
      clock.now = code.expiresAt;
      expect(await store.findCode(code.ref)).toBeUndefined();
      expect(await store.consumeCode(code.ref)).toBe(false);
    });

    it('rejects an empty grant id', async () => {
      await expect(store.saveCode(codeRecord(''))).rejects.toBeInstanceOf(TypeError);
    });

    it('keeps nothing of a code saved already expired, and it replaces the grant\'s earlier code', async () => {
      const earlier = codeRecord(fresh('grant'));
      await store.saveCode(earlier);
      const expired = codeRecord(earlier.ref.grantId, { expiresAt: BASE_TIME });
      await store.saveCode(expired);
      expect(await store.findCode(expired.ref)).toBeUndefined();
      expect(await store.findCode(earlier.ref)).toBeUndefined();
      expect(await store.consumeCode(earlier.ref)).toBe(false);
    });
  });

  describe('first tokens of a grant', () => {
    it('issues them once the code was exchanged, and only once', async () => {
      const grantId = fresh('grant');
      const code = codeRecord(grantId);
      const tokens = { access: accessToken(grantId), refresh: refreshToken(grantId) };
      await store.saveCode(code);
      expect(await store.issueTokens(tokens)).toBe(false);
      expect(await store.findAccessToken(tokens.access.ref)).toBeUndefined();

      expect(await store.consumeCode(code.ref)).toBe(true);
      expect(await store.issueTokens(tokens)).toBe(true);
      expect(await store.findAccessToken(tokens.access.ref)).toStrictEqual(accessView(code, tokens.access));
      expect(await store.findRefreshToken(tokens.refresh.ref)).toStrictEqual(refreshView(code, tokens.refresh));

      const again = { access: accessToken(grantId), refresh: refreshToken(grantId) };
      expect(await store.issueTokens(again)).toBe(false);
      expect(await store.findAccessToken(again.access.ref)).toBeUndefined();
      expect(await store.findRefreshToken(again.refresh.ref)).toBeUndefined();
      expect(await store.findAccessToken(tokens.access.ref)).toStrictEqual(accessView(code, tokens.access));
    });

    it('issues an access token alone when no refresh token was earned', async () => {
      const { code, access } = await issueGrant(store, { refresh: false });
      expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
      expect(await store.findRefreshToken(access.ref)).toBeUndefined();
    });

    it('refuses tokens for a grant it does not know', async () => {
      const grantId = fresh('grant');
      expect(await store.issueTokens({ access: accessToken(grantId) })).toBe(false);
      expect(await store.rotateRefreshToken(ref(grantId), nextTokens(grantId))).toBe('invalid');
    });

    it('refuses, with a TypeError, tokens of two different grants', async () => {
      const grantId = fresh('grant');
      await expect(store.issueTokens({ access: accessToken(grantId), refresh: refreshToken(fresh('grant')) })).rejects.toBeInstanceOf(TypeError);
      await expect(store.rotateRefreshToken(ref(fresh('grant')), nextTokens(grantId))).rejects.toBeInstanceOf(TypeError);
      await expect(store.issueTokens({ access: accessToken('') })).rejects.toBeInstanceOf(TypeError);
    });

    it('keeps the code, access tokens and refresh tokens apart even under one hash', async () => {
      const grantId = fresh('grant');
      const code = codeRecord(grantId);
      const access = accessToken(grantId, { ref: code.ref });
      await store.saveCode(code);
      await store.consumeCode(code.ref);
      expect(await store.issueTokens({ access })).toBe(true);
      expect(await store.findAccessToken(code.ref)).toStrictEqual(accessView(code, access));
      expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: true });
      expect(await store.findRefreshToken(code.ref)).toBeUndefined();
      expect(await store.rotateRefreshToken(code.ref, nextTokens(grantId))).toBe('invalid');
    });
  });

  describe('access tokens', () => {
    it('does not find an access token once the clock reaches expiresAt', async () => {
      const { code, access } = await issueGrant(store, { access: { expiresAt: BASE_TIME + 5 * MINUTE } });
      clock.now = access.expiresAt - 1;
      expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
      clock.now = access.expiresAt;
      expect(await store.findAccessToken(access.ref)).toBeUndefined();
    });

    it('revokeAccessToken ends that token at once and leaves the rest of its grant', async () => {
      const { code, access: first, refresh } = await issueGrant(store);
      const grantId = code.ref.grantId;
      const second = nextTokens(grantId);
      expect(await store.rotateRefreshToken(refresh!.ref, second)).toBe('rotated');

      await store.revokeAccessToken(first.ref);
      expect(await store.findAccessToken(first.ref)).toBeUndefined();
      expect(await store.findAccessToken(second.access.ref)).toStrictEqual(accessView(code, second.access));
      await store.revokeAccessToken(second.access.ref);
      expect(await store.findAccessToken(second.access.ref)).toBeUndefined();

      const third = nextTokens(grantId);
      expect(await store.rotateRefreshToken(second.refresh.ref, third)).toBe('rotated');
      expect(await store.findAccessToken(third.access.ref)).toStrictEqual(accessView(code, third.access));
      await store.revokeAccessToken(ref(grantId));
      await store.revokeAccessToken(ref(fresh('grant')));
      expect(await store.findAccessToken(third.access.ref)).toStrictEqual(accessView(code, third.access));
    });
  });

  describe('client tokens (client_credentials, RFC 6749 4.4)', () => {
    function clientToken(overrides: Partial<ClientTokenRecord> = {}): ClientTokenRecord {
      return { ref: ref(fresh('grant')), clientId: 'service-1', scope: ['profile'], issuedAt: Math.floor(BASE_TIME / 1000), expiresAt: BASE_TIME + HOUR, ...overrides };
    }

    it('finds the token with its client, scope and issue time and no user, until it expires', async () => {
      const token = clientToken();
      await store.issueClientToken(token);
      expect(await store.findAccessToken(token.ref)).toStrictEqual({
        ref: token.ref,
        clientId: 'service-1',
        scope: ['profile'],
        authTime: token.issuedAt,
        issuedAt: token.issuedAt,
        expiresAt: token.expiresAt,
      });
      expect(await store.findAccessToken({ grantId: token.ref.grantId, hash: fakeHash() })).toBeUndefined();
      clock.now = token.expiresAt;
      expect(await store.findAccessToken(token.ref)).toBeUndefined();
    });

    it('is no code and no refresh token, and no user\'s grant', async () => {
      const token = clientToken();
      await store.issueClientToken(token);
      expect(await store.findCode(token.ref)).toBeUndefined();
      expect(await store.findCode({ grantId: token.ref.grantId, hash: '' })).toBeUndefined();
      expect(await store.consumeCode({ grantId: token.ref.grantId, hash: '' })).toBe(false);
      expect(await store.findRefreshToken(token.ref)).toBeUndefined();
      expect(await store.issueTokens({ access: accessToken(token.ref.grantId) })).toBe(false);
      await store.revokeUserGrants('', 'service-1');
      expect(await store.findAccessToken(token.ref)).toBeDefined();
    });

    it('keeps nothing of a token issued already expired, and it replaces the grant\'s earlier token', async () => {
      const earlier = clientToken();
      await store.issueClientToken(earlier);
      const expired = clientToken({ ref: ref(earlier.ref.grantId), expiresAt: BASE_TIME });
      await store.issueClientToken(expired);
      expect(await store.findAccessToken(expired.ref)).toBeUndefined();
      expect(await store.findAccessToken(earlier.ref)).toBeUndefined();
    });

    it('ends with revokeAccessToken and with revokeGrant', async () => {
      const first = clientToken();
      const second = clientToken();
      await store.issueClientToken(first);
      await store.issueClientToken(second);
      await store.revokeAccessToken(first.ref);
      expect(await store.findAccessToken(first.ref)).toBeUndefined();
      await store.revokeGrant(second.ref.grantId);
      expect(await store.findAccessToken(second.ref)).toBeUndefined();
    });
  });

  describe('issue time', () => {
    it('keeps an access token\'s issuedAt when the issuance carries one', async () => {
      const issuedAt = Math.floor(BASE_TIME / 1000);
      const { access } = await issueGrant(store, { access: { issuedAt } });
      expect((await store.findAccessToken(access.ref))?.issuedAt).toBe(issuedAt);
    });
  });
}
