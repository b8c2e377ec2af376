/**
 * The one behaviour every OAuthStore must show (src/oauth/store/types.ts), run against memory,
 * Redis and PostgreSQL alike so the three cannot drift. Backend-specific checks live beside the
 * runner in stores.test.ts.
 *
 * One store per backend serves the whole suite; each test works on fresh ids, and the injected
 * clock is reset before each test and moved by hand to cross expiry deadlines.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { ConfigurationError } from '../../src/core/errors.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  AuthorizedUser,
  OAuthClientRecord,
  OAuthStore,
  RefreshTokenRecord,
  TokenRef,
} from '../../src/oauth/store/types.js';

export interface OAuthStoreConformanceOptions {
  name: string;
  /** Builds a store on the given clock; cleanup removes everything it stored and closes clients. */
  create: (now: Clock) => Promise<{ store: OAuthStore; cleanup(): Promise<void> }>;
}

/** A fixed instant, so the suite reads the same whatever the wall clock says. */
export const BASE_TIME = Date.UTC(2027, 0, 15, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let sequence = 0;
/** An id no other test (of this run or a concurrent one) uses. */
function fresh(label: string): string {
  sequence += 1;
  return `${label}-${sequence}-${randomBytes(3).toString('hex')}`;
}

/** A SHA-256 base64url-like hash, as the OAuth server would compute from a secret. */
function fakeHash(): string {
  return randomBytes(32).toString('base64url');
}

function ref(grantId: string): TokenRef {
  return { grantId, hash: fakeHash() };
}

const alice: AuthorizedUser = { sub: 'user-alice', claims: { name: 'Alice', email: 'alice@example.com', email_verified: true } };

export function codeRecord(grantId: string, overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    ref: ref(grantId),
    clientId: 'client-1',
    scope: ['openid', 'profile'],
    user: alice,
    authTime: Math.floor(BASE_TIME / 1000),
    expiresAt: BASE_TIME + MINUTE,
    redirectUri: 'https://app.example/callback',
    ...overrides,
  };
}

export function tokenRecord(grantId: string, overrides: Partial<AccessTokenRecord> = {}): AccessTokenRecord {
  return {
    ref: ref(grantId),
    clientId: 'client-1',
    scope: ['openid', 'offline_access'],
    user: alice,
    authTime: Math.floor(BASE_TIME / 1000),
    expiresAt: BASE_TIME + HOUR,
    ...overrides,
  };
}

export function refreshRecord(grantId: string, overrides: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord {
  return tokenRecord(grantId, { expiresAt: BASE_TIME + 24 * HOUR, ...overrides });
}

function clientRecord(overrides: Partial<OAuthClientRecord> = {}): OAuthClientRecord {
  return {
    id: fresh('client'),
    name: 'Demo application',
    // The shape hashClientSecret() produces: scrypt$N$r$p$ 16-byte salt $ 32-byte hash, base64url.
    secretHash: `scrypt$16384$8$1$${'A'.repeat(22)}$${'B'.repeat(43)}`,
    redirectUris: ['https://app.example/callback', 'http://127.0.0.1:8080/cb'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    grants: ['authorization_code', 'refresh_token'],
    ...overrides,
  };
}

/** Runs `count` calls at once and answers how many returned true. */
async function winners(count: number, call: () => Promise<boolean>): Promise<number> {
  const results = await Promise.all(Array.from({ length: count }, call));
  return results.filter(Boolean).length;
}

export function describeOAuthStoreConformance({ name, create }: OAuthStoreConformanceOptions): void {
  describe(`OAuthStore conformance: ${name}`, () => {
    const clock = { now: BASE_TIME };
    let store: OAuthStore;
    let cleanup: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      ({ store, cleanup } = await create(() => clock.now));
    });
    afterAll(async () => {
      await cleanup?.();
    });
    beforeEach(() => {
      clock.now = BASE_TIME;
    });

    describe('clients', () => {
      it('answers undefined for an unknown client', async () => {
        expect(await store.getClient(fresh('nobody'))).toBeUndefined();
      });

      it('saves a confidential and a public client and reads them back', async () => {
        const confidential = clientRecord();
        const { secretHash: _omitted, ...publicClient } = clientRecord({ grants: ['authorization_code'] });
        await store.saveClient(confidential);
        await store.saveClient(publicClient);
        expect(await store.getClient(confidential.id)).toStrictEqual(confidential);
        expect(await store.getClient(publicClient.id)).toStrictEqual(publicClient);
      });

      it('replaces a client saved again under the same id', async () => {
        const first = clientRecord();
        await store.saveClient(first);
        const second: OAuthClientRecord = { ...first, name: 'Renamed', redirectUris: ['https://new.example/cb'] };
        await store.saveClient(second);
        expect(await store.getClient(first.id)).toStrictEqual(second);
      });

      // A record authorize or token could not use is refused when saved, naming the field.
      it.each<[string, Record<string, unknown>, string]>([
        ['a secret hash mangled by a shell ($ expanded)', { secretHash: 'scrypt6384' }, 'secretHash'],
        ['a secret hash with a truncated hash part', { secretHash: 'scrypt$16384$8$1$c2FsdA$aGFzaA' }, 'secretHash'],
        ['a relative redirect URI', { redirectUris: ['/callback'] }, 'redirectUris[0]'],
        ['a redirect URI with a fragment (RFC 6749 3.1.2)', { redirectUris: ['https://app.example/cb#x'] }, 'redirectUris[0]'],
        ['no redirect URI', { redirectUris: [] }, 'redirectUris'],
        ['an unsupported scope', { scopes: ['openid', 'admin'] }, 'scopes[1]'],
        ['an unknown grant', { grants: ['password'] }, 'grants[0]'],
        ['an empty id', { id: '' }, 'id'],
        ['a misspelt field', { redirectUri: 'https://app.example/cb' }, 'redirectUri'],
      ])('refuses %s with a ConfigurationError naming the field, and stores nothing', async (_, change, field) => {
        const record = { ...clientRecord(), ...change };
        const saving = store.saveClient(record as unknown as OAuthClientRecord);
        await expect(saving).rejects.toBeInstanceOf(ConfigurationError);
        await expect(saving).rejects.toMatchObject({ code: 'invalid_client_record', field });
        if (typeof record.id === 'string' && record.id !== '') expect(await store.getClient(record.id)).toBeUndefined();
      });
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
    });

    describe('access and refresh tokens', () => {
      it('round-trips both tokens of a grant', async () => {
        const grantId = fresh('grant');
        const access = tokenRecord(grantId);
        const refresh = refreshRecord(grantId);
        expect(await store.saveTokens({ access, refresh })).toBe(true);
        expect(await store.findAccessToken(access.ref)).toStrictEqual(access);
        expect(await store.findRefreshToken(refresh.ref)).toStrictEqual({ ...refresh, consumed: false });
      });

      it('saves an access token alone when no refresh token was issued', async () => {
        const access = tokenRecord(fresh('grant'));
        expect(await store.saveTokens({ access })).toBe(true);
        expect(await store.findAccessToken(access.ref)).toStrictEqual(access);
        expect(await store.findRefreshToken(access.ref)).toBeUndefined();
      });

      it('keeps codes, access tokens and refresh tokens apart even under one hash', async () => {
        const grantId = fresh('grant');
        const code = codeRecord(grantId);
        const access = tokenRecord(grantId, { ref: code.ref });
        await store.saveCode(code);
        expect(await store.saveTokens({ access })).toBe(true);
        expect(await store.findAccessToken(code.ref)).toStrictEqual(access);
        expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: false });
        expect(await store.findRefreshToken(code.ref)).toBeUndefined();
        expect(await store.rotateRefreshToken(code.ref)).toBe(false);
      });

      it('does not find an access token once the clock reaches expiresAt', async () => {
        const access = tokenRecord(fresh('grant'), { expiresAt: BASE_TIME + 5 * MINUTE });
        await store.saveTokens({ access });
        clock.now = access.expiresAt - 1;
        expect(await store.findAccessToken(access.ref)).toStrictEqual(access);
        clock.now = access.expiresAt;
        expect(await store.findAccessToken(access.ref)).toBeUndefined();
      });

      it('neither finds nor rotates an expired refresh token', async () => {
        const grantId = fresh('grant');
        const refresh = refreshRecord(grantId);
        await store.saveTokens({ access: tokenRecord(grantId), refresh });
        clock.now = refresh.expiresAt;
        expect(await store.findRefreshToken(refresh.ref)).toBeUndefined();
        expect(await store.rotateRefreshToken(refresh.ref)).toBe(false);
      });

      it('lets exactly one of 20 concurrent callers rotate a refresh token, leaving a tombstone', async () => {
        const grantId = fresh('grant');
        const refresh = refreshRecord(grantId);
        await store.saveTokens({ access: tokenRecord(grantId), refresh });
        expect(await winners(20, () => store.rotateRefreshToken(refresh.ref))).toBe(1);
        expect(await store.rotateRefreshToken(refresh.ref)).toBe(false);
        expect(await store.findRefreshToken(refresh.ref)).toStrictEqual({ ...refresh, consumed: true });
      });

      it('refuses an access and a refresh token of two different grants', async () => {
        const tokens = { access: tokenRecord(fresh('grant')), refresh: refreshRecord(fresh('grant')) };
        await expect(store.saveTokens(tokens)).rejects.toBeInstanceOf(TypeError);
      });
    });

    describe('grant revocation', () => {
      it('makes every token of the grant unfindable and leaves other grants alone', async () => {
        const grantId = fresh('grant');
        const first = { access: tokenRecord(grantId), refresh: refreshRecord(grantId) };
        const second = { access: tokenRecord(grantId), refresh: refreshRecord(grantId) };
        const otherGrant = fresh('grant');
        const other = { access: tokenRecord(otherGrant), refresh: refreshRecord(otherGrant) };
        for (const tokens of [first, second, other]) expect(await store.saveTokens(tokens)).toBe(true);
        expect(await store.rotateRefreshToken(first.refresh.ref)).toBe(true);

        await store.revokeGrant(grantId, BASE_TIME + HOUR);

        for (const { access, refresh } of [first, second]) {
          expect(await store.findAccessToken(access.ref)).toBeUndefined();
          expect(await store.findRefreshToken(refresh.ref)).toBeUndefined();
          expect(await store.rotateRefreshToken(refresh.ref)).toBe(false);
        }
        expect(await store.findAccessToken(other.access.ref)).toStrictEqual(other.access);
        expect(await store.findRefreshToken(other.refresh.ref)).toStrictEqual({ ...other.refresh, consumed: false });
      });

      it('refuses and stores nothing for a revoked grant until `until` passes', async () => {
        const grantId = fresh('grant');
        const until = BASE_TIME + HOUR;
        await store.revokeGrant(grantId, until);

        const refused = { access: tokenRecord(grantId, { expiresAt: until + HOUR }), refresh: refreshRecord(grantId) };
        expect(await store.saveTokens(refused)).toBe(false);
        clock.now = until - 1;
        expect(await store.saveTokens(refused)).toBe(false);
        expect(await store.findAccessToken(refused.access.ref)).toBeUndefined();
        expect(await store.findRefreshToken(refused.refresh.ref)).toBeUndefined();

        clock.now = until;
        const later = { access: tokenRecord(grantId, { expiresAt: until + HOUR }), refresh: refreshRecord(grantId) };
        expect(await store.saveTokens(later)).toBe(true);
        expect(await store.findAccessToken(later.access.ref)).toStrictEqual(later.access);
        expect(await store.findRefreshToken(later.refresh.ref)).toStrictEqual({ ...later.refresh, consumed: false });
      });

      it('keeps the later deadline when a grant is revoked twice', async () => {
        const grantId = fresh('grant');
        await store.revokeGrant(grantId, BASE_TIME + 2 * HOUR);
        await store.revokeGrant(grantId, BASE_TIME + HOUR);
        clock.now = BASE_TIME + HOUR;
        expect(await store.saveTokens({ access: tokenRecord(grantId, { expiresAt: BASE_TIME + 3 * HOUR }) })).toBe(false);
      });

      it('never leaves a token alive when issuance races the revocation', async () => {
        const grants = Array.from({ length: 10 }, () => fresh('grant'));
        const issued = await Promise.all(
          grants.map(async (grantId) => {
            const tokens = { access: tokenRecord(grantId), refresh: refreshRecord(grantId) };
            await Promise.all([store.saveTokens(tokens), store.revokeGrant(grantId, BASE_TIME + HOUR)]);
            return tokens;
          }),
        );
        for (const { access, refresh } of issued) {
          expect(await store.findAccessToken(access.ref)).toBeUndefined();
          expect(await store.findRefreshToken(refresh.ref)).toBeUndefined();
        }
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
        const access = tokenRecord(grantId, { user, scope: ['openid', 'profile', 'email'] });
        const refresh = refreshRecord(grantId, { user });
        const client = clientRecord({ name: 'Приложение 应用 🚚' });

        await store.saveCode(code);
        await store.saveTokens({ access, refresh });
        await store.saveClient(client);
        expect(await store.findCode(code.ref)).toStrictEqual({ ...code, consumed: false });
        expect(await store.findAccessToken(access.ref)).toStrictEqual(access);
        expect(await store.findRefreshToken(refresh.ref)).toStrictEqual({ ...refresh, consumed: false });
        expect(await store.getClient(client.id)).toStrictEqual(client);
      });

      it('keeps its own copies: changing a saved or returned record changes nothing stored (returned access tokens may be frozen)', async () => {
        const access = tokenRecord(fresh('grant'));
        const expected = structuredClone(access);
        await store.saveTokens({ access });
        access.scope.push('written-after-save');
        const found = (await store.findAccessToken(access.ref))!;
        // A store may hand out a copy or one frozen record; either way a reader changes nothing.
        if (Object.isFrozen(found)) {
          expect(() => found.scope.push('admin')).toThrow(TypeError);
          expect(() => {
            found.user.claims.name = 'Mallory';
          }).toThrow(TypeError);
        } else {
          found.scope.push('admin');
          found.user.claims.name = 'Mallory';
        }
        expect(await store.findAccessToken(access.ref)).toStrictEqual(expected);
      });
    });
  });
}
