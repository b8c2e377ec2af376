/**
 * OAuthStore conformance. Revocation of a grant or of a user's grants at a client, racing refreshes
 * included, and consents per (user, client) pair.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { OAuthStore } from '../../../src/oauth/store/types.js';
import { accessToken, accessView, alice, codeRecord, type ConformanceSuite, fresh, issueGrant, nextTokens, refreshView } from './fixtures.js';

export function describeRevocationAndConsentConformance(suite: ConformanceSuite): void {
  let store: OAuthStore;
  beforeAll(() => {
    ({ store } = suite);
  });

  describe('revocation', () => {
    it('revokeGrant ends the code and every token of the grant, and leaves other grants alone', async () => {
      const { code, access: access0, refresh: refresh0 } = await issueGrant(store);
      const grantId = code.ref.grantId;
      const first = nextTokens(grantId);
      expect(await store.rotateRefreshToken(refresh0!.ref, first)).toBe('rotated');
      const other = await issueGrant(store);

      await store.revokeGrant(grantId);

      expect(await store.findCode(code.ref)).toBeUndefined();
      for (const access of [access0, first.access]) expect(await store.findAccessToken(access.ref)).toBeUndefined();
      for (const refresh of [refresh0!, first.refresh]) {
        expect(await store.findRefreshToken(refresh.ref)).toBeUndefined();
        expect(await store.rotateRefreshToken(refresh.ref, nextTokens(grantId))).toBe('invalid');
      }
      expect(await store.findAccessToken(other.access.ref)).toStrictEqual(accessView(other.code, other.access));
      expect(await store.findRefreshToken(other.refresh!.ref)).toStrictEqual(refreshView(other.code, other.refresh!));
    });

    it('revokeGrant answers whether it ended a live grant', async () => {
      const { code } = await issueGrant(store);
      expect(await store.revokeGrant(code.ref.grantId)).toBe(true);
      expect(await store.revokeGrant(code.ref.grantId)).toBe(false);
      expect(await store.revokeGrant(fresh('grant'))).toBe(false);
    });

    it('makes a revoked grant\'s pending code unusable', async () => {
      const code = codeRecord(fresh('grant'));
      await store.saveCode(code);
      await store.revokeGrant(code.ref.grantId);
      expect(await store.findCode(code.ref)).toBeUndefined();
      expect(await store.consumeCode(code.ref)).toBe(false);
      expect(await store.issueTokens({ access: accessToken(code.ref.grantId) })).toBe(false);
    });

    it('never leaves a token alive when a refresh or the first issuance races the revocation', async () => {
      const raced = await Promise.all(
        Array.from({ length: 10 }, async (_, index) => {
          if (index % 2 === 0) {
            const { code, refresh } = await issueGrant(store);
            const tokens = nextTokens(code.ref.grantId);
            await Promise.all([store.rotateRefreshToken(refresh!.ref, tokens), store.revokeGrant(code.ref.grantId)]);
            return tokens;
          }
          const code = codeRecord(fresh('grant'));
          await store.saveCode(code);
          await store.consumeCode(code.ref);
          const tokens = nextTokens(code.ref.grantId);
          await Promise.all([store.issueTokens(tokens), store.revokeGrant(code.ref.grantId)]);
          return tokens;
        }),
      );
      for (const { access, refresh } of raced) {
        expect(await store.findAccessToken(access.ref)).toBeUndefined();
        expect(await store.findRefreshToken(refresh.ref)).toBeUndefined();
      }
    });

    it('revokeUserGrants ends every grant of the user at the client, a pending code included, and forgets the consent', async () => {
      const sub = fresh('sub');
      const user = { ...alice, sub };
      const issued = await issueGrant(store, { code: { user } });
      const rotated = nextTokens(issued.code.ref.grantId);
      expect(await store.rotateRefreshToken(issued.refresh!.ref, rotated)).toBe('rotated');
      const pending = codeRecord(fresh('grant'), { user });
      await store.saveCode(pending);
      const otherClient = await issueGrant(store, { code: { user, clientId: 'client-2' } });
      const otherUser = await issueGrant(store, { code: { user: { ...alice, sub: fresh('sub') } } });
      await store.saveConsent(sub, 'client-1', ['openid']);
      await store.saveConsent(sub, 'client-2', ['openid']);

      // Two grants ended: the one with tokens and the pending code.
      expect(await store.revokeUserGrants(sub, 'client-1')).toBe(2);

      for (const access of [issued.access, rotated.access]) expect(await store.findAccessToken(access.ref)).toBeUndefined();
      expect(await store.findRefreshToken(rotated.refresh.ref)).toBeUndefined();
      expect(await store.findCode(pending.ref)).toBeUndefined();
      expect(await store.consumeCode(pending.ref)).toBe(false);
      expect(await store.getConsent(sub, 'client-1')).toBeUndefined();

      for (const other of [otherClient, otherUser]) {
        expect(await store.findAccessToken(other.access.ref)).toStrictEqual(accessView(other.code, other.access));
        expect(await store.findRefreshToken(other.refresh!.ref)).toStrictEqual(refreshView(other.code, other.refresh!));
      }
      expect(await store.getConsent(sub, 'client-2')).toStrictEqual(['openid']);
      expect(await store.revokeUserGrants(fresh('sub'), 'client-1')).toBe(0);
    });
  });

  describe('consents', () => {
    it('answers undefined before any consent, then the saved scopes', async () => {
      const sub = fresh('sub');
      expect(await store.getConsent(sub, 'client-1')).toBeUndefined();
      await store.saveConsent(sub, 'client-1', ['openid', 'profile']);
      expect(await store.getConsent(sub, 'client-1')).toStrictEqual(['openid', 'profile']);
    });

    it('replaces the previous scopes, an empty list included', async () => {
      const sub = fresh('sub');
      await store.saveConsent(sub, 'client-1', ['openid', 'profile', 'email']);
      await store.saveConsent(sub, 'client-1', ['openid']);
      expect(await store.getConsent(sub, 'client-1')).toStrictEqual(['openid']);
      await store.saveConsent(sub, 'client-1', []);
      expect(await store.getConsent(sub, 'client-1')).toStrictEqual([]);
    });

    it('keeps each (user, client) pair apart', async () => {
      const [sub, otherSub] = [fresh('sub'), fresh('sub')];
      await store.saveConsent(sub, 'client-a', ['openid']);
      await store.saveConsent(sub, 'client-b', ['email']);
      await store.saveConsent(otherSub, 'client-a', ['profile']);
      expect(await store.getConsent(sub, 'client-a')).toStrictEqual(['openid']);
      expect(await store.getConsent(sub, 'client-b')).toStrictEqual(['email']);
      expect(await store.getConsent(otherSub, 'client-a')).toStrictEqual(['profile']);
      expect(await store.getConsent(otherSub, 'client-b')).toBeUndefined();
    });

    it('does not confuse a sub containing ":" with a different split of the same text', async () => {
      const base = fresh('sub');
      await store.saveConsent(`${base}:x`, 'y', ['openid']);
      expect(await store.getConsent(base, 'x:y')).toBeUndefined();
      await store.saveConsent(base, 'x:y', ['email']);
      expect(await store.getConsent(`${base}:x`, 'y')).toStrictEqual(['openid']);
      expect(await store.getConsent(base, 'x:y')).toStrictEqual(['email']);
    });
  });
}
