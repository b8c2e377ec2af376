/**
 * OAuthStore conformance. Records come back exactly as saved (unicode, nested claims) and stay the
 * store's own copies.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizedUser, OAuthStore } from '../../../src/oauth/store/types.js';
import { accessToken, accessView, alice, clientRecord, codeRecord, type ConformanceSuite, fresh, refreshToken, refreshView } from './fixtures.js';

export function describeRecordConformance(suite: ConformanceSuite): void {
  let store: OAuthStore;
  beforeAll(() => {
    ({ store } = suite);
  });

  describe('records', () => {
    const claims = {
      name: 'Zoë Ångström-Nguyễn 👩🏽‍💻',
      nickname: '山田太郎',
      locale: 'ar-EG مرحبا',
      // The same letter composed (NFC) and decomposed (NFD) must come back as given.
      nfc: 'é',
      nfd: 'e\u0301',
      tricky: 'quote " backslash \\ slash / tab \t newline \n line-separator \u2028',
      empty: '',
      address: { street_address: '1 Rue de la Paix', geo: [48.8698, 2.3311], extra: { floor: 3, door: null } },
      groups: [['a', 'b'], [], [{ deep: [{ deeper: true }] }]],
      big: Number.MAX_SAFE_INTEGER,
      negative: -12.5,
      flag: false,
    };

    it('round-trips unicode claims and nested objects exactly', async () => {
      const grantId = fresh('grant');
      const user: AuthorizedUser = { sub: 'usér|ユーザー:1', claims };
      const code = codeRecord(grantId, {
        user,
        nonce: 'n-ø-∆',
        codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        codeChallengeMethod: 'S256',
      });
      const access = accessToken(grantId, { scope: ['openid', 'profile', 'email'] });
      const refresh = refreshToken(grantId);
      const client = clientRecord({ name: 'Приложение 应用 🚚' });

      await store.saveCode(code);
      expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: false });
      await store.consumeCode(code.ref);
      await store.issueTokens({ access, refresh });
      await store.saveClient(client);
      expect(await store.findAccessToken(access.ref)).toStrictEqual(accessView(code, access));
      expect(await store.findRefreshToken(refresh.ref)).toStrictEqual(refreshView(code, refresh));
      expect(await store.getClient(client.id)).toStrictEqual(client);
    });

    it('keeps its own copies: changing a saved or returned record changes nothing stored (returned access tokens may be frozen)', async () => {
      const grantId = fresh('grant');
      const code = codeRecord(grantId, { user: structuredClone(alice) });
      const access = accessToken(grantId);
      const expected = accessView(structuredClone(code), structuredClone(access));
      await store.saveCode(code);
      await store.consumeCode(code.ref);
      await store.issueTokens({ access });
      access.scope.push('written-after-save');
      code.user.claims.name = 'Changed after save';
      const found = (await store.findAccessToken(access.ref))!;
      // A store may hand out a copy or one frozen record; either way a reader changes nothing.
      if (Object.isFrozen(found)) {
        expect(() => found.scope.push('admin')).toThrow(TypeError);
        expect(() => {
          found.user!.claims.name = 'Mallory';
        }).toThrow(TypeError);
      } else {
        found.scope.push('admin');
        found.user!.claims.name = 'Mallory';
      }
      expect(await store.findAccessToken(access.ref)).toStrictEqual(expected);
    });
  });
}
