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
import { EARLIER_REFRESH_TOKENS } from '../../src/oauth/store/grant-record.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  AuthorizedUser,
  ClientTokenRecord,
  ConsumedMarker,
  NewToken,
  NewTokens,
  OAuthClientRecord,
  OAuthStore,
  RefreshTokenRecord,
  TokenRef,
} from '../../src/oauth/store/types.js';

export interface OAuthStoreConformanceOptions {
  name: string;
  /**
   * Builds a store on the given clock; cleanup removes everything it stored and closes clients.
   * `footprint` answers how much the store holds for one grant (Redis: keys and hash fields under
   * its tag; PostgreSQL: the stored size of its rows; memory: entries); without it the bound check
   * still refreshes the grant but cannot count.
   */
  create: (now: Clock) => Promise<{ store: OAuthStore; footprint?(grantId: string): Promise<number>; cleanup(): Promise<void> }>;
  /** Refreshes of one grant in the bound check (default 20,000). */
  refreshes?: number;
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
    scope: ['openid', 'profile', 'offline_access'],
    user: alice,
    authTime: Math.floor(BASE_TIME / 1000),
    expiresAt: BASE_TIME + MINUTE,
    redirectUri: 'https://app.example/callback',
    ...overrides,
  };
}

type NewAccessToken = NewTokens['access'];

export function accessToken(grantId: string, overrides: Partial<NewAccessToken> = {}): NewAccessToken {
  return { ref: ref(grantId), scope: ['openid', 'profile', 'offline_access'], expiresAt: BASE_TIME + HOUR, ...overrides };
}

export function refreshToken(grantId: string, overrides: Partial<NewToken> = {}): NewToken {
  return { ref: ref(grantId), expiresAt: BASE_TIME + 24 * HOUR, ...overrides };
}

/** The tokens of one refresh of the grant. */
export function nextTokens(grantId: string, access: Partial<NewAccessToken> = {}): NewTokens & { refresh: NewToken } {
  return { access: accessToken(grantId, access), refresh: refreshToken(grantId) };
}

export interface IssuedGrant {
  code: AuthorizationCodeRecord;
  access: NewAccessToken;
  refresh?: NewToken;
}

/**
 * A grant as the token endpoint starts one: its code saved, exchanged, and its first tokens
 * issued. `refresh: false` issues an access token alone.
 */
export async function issueGrant(
  store: OAuthStore,
  options: { grantId?: string; code?: Partial<AuthorizationCodeRecord>; access?: Partial<NewAccessToken>; refresh?: Partial<NewToken> | false } = {},
): Promise<IssuedGrant> {
  const grantId = options.grantId ?? fresh('grant');
  const code = codeRecord(grantId, options.code);
  const access = accessToken(grantId, options.access);
  const refresh = options.refresh === false ? undefined : refreshToken(grantId, options.refresh);
  await store.saveCode(code);
  expect(await store.consumeCode(code.ref)).toBe(true);
  expect(await store.issueTokens(refresh ? { access, refresh } : { access })).toBe(true);
  return refresh ? { code, access, refresh } : { code, access };
}

/** What findAccessToken answers for an access token of the grant. */
export function accessView(code: AuthorizationCodeRecord, access: NewAccessToken): AccessTokenRecord {
  return { ref: access.ref, clientId: code.clientId, scope: access.scope, user: code.user, authTime: code.authTime, expiresAt: access.expiresAt };
}

/**
 * What findRefreshToken answers for a refresh token of the grant: always the granted scope; for
 * an earlier generation's (`earlier`), consumed, and for the previous one when it was rotated out.
 */
function refreshView(code: AuthorizationCodeRecord, refresh: NewToken, earlier?: { rotatedAt?: number }): RefreshTokenRecord & ConsumedMarker {
  const view = { ref: refresh.ref, clientId: code.clientId, scope: code.scope, user: code.user, authTime: code.authTime, expiresAt: refresh.expiresAt };
  if (!earlier) return { ...view, consumed: false };
  return earlier.rotatedAt === undefined ? { ...view, consumed: true } : { ...view, consumed: true, rotatedAt: earlier.rotatedAt };
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

export function describeOAuthStoreConformance({ name, create, refreshes = 20_000 }: OAuthStoreConformanceOptions): void {
  describe(`OAuthStore conformance: ${name}`, () => {
    const clock = { now: BASE_TIME };
    let store: OAuthStore;
    let footprint: ((grantId: string) => Promise<number>) | undefined;
    let cleanup: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      ({ store, footprint, cleanup } = await create(() => clock.now));
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

      it('lists the clients it holds and deletes one, keeping a suspension and a rotated-out secret', async () => {
        const kept = clientRecord({ status: 'suspended', previousSecretHash: clientRecord().secretHash, previousSecretValidUntil: BASE_TIME + 60_000 });
        const gone = clientRecord();
        await store.saveClient(kept);
        await store.saveClient(gone);
        const ids = (await store.listClients()).map((client) => client.id);
        expect(ids).toEqual(expect.arrayContaining([kept.id, gone.id]));
        expect(await store.deleteClient(gone.id)).toBe(true);
        expect(await store.deleteClient(gone.id)).toBe(false);
        expect(await store.getClient(gone.id)).toBeUndefined();
        expect((await store.listClients()).map((client) => client.id)).not.toContain(gone.id);
        expect(await store.getClient(kept.id)).toStrictEqual(kept);
      });

      it('lists clients in id order (byte order), a page after an id, of one status', async () => {
        // Ids around a prefix of their own, in an order where locale collation and byte order differ.
        const prefix = fresh('page');
        const ids = [`${prefix}-B`, `${prefix}-a`, `${prefix}-_`, `${prefix}-Z`];
        for (const [i, id] of ids.entries()) await store.saveClient(clientRecord({ id, ...(i === 1 ? { status: 'suspended' as const } : {}) }));
        const ordered = [...ids].sort((a, b) => (a < b ? -1 : 1));
        expect(ordered).toEqual([`${prefix}-B`, `${prefix}-Z`, `${prefix}-_`, `${prefix}-a`]);

        const all = (await store.listClients()).map((client) => client.id);
        expect(all.filter((id) => id.startsWith(prefix))).toEqual(ordered);
        expect(all).toEqual([...all].sort((a, b) => (a < b ? -1 : 1)));
        expect((await store.listClients({ after: prefix, limit: 2 })).map((client) => client.id)).toEqual(ordered.slice(0, 2));
        expect((await store.listClients({ after: ordered[1]!, limit: 2 })).map((client) => client.id)).toEqual(ordered.slice(2, 4));
        const suspended = await store.listClients({ after: prefix, status: 'suspended', limit: 1 });
        expect(suspended.map((client) => [client.id, client.status])).toEqual([[`${prefix}-a`, 'suspended']]);
        const active = (await store.listClients({ after: prefix, status: 'active' })).map((client) => client.id).filter((id) => id.startsWith(prefix));
        expect(active).toEqual(ordered.filter((id) => id !== `${prefix}-a`));
      });

      it("deleting a client ends its users' grants and forgets their consents, and leaves other clients' alone", async () => {
        const gone = clientRecord();
        const kept = clientRecord();
        await store.saveClient(gone);
        await store.saveClient(kept);
        const goneGrants = await Promise.all([issueGrant(store, { code: { clientId: gone.id } }), issueGrant(store, { code: { clientId: gone.id, user: { sub: 'user-bob', claims: {} } } })]);
        const keptGrant = await issueGrant(store, { code: { clientId: kept.id } });
        await store.saveConsent('user-alice', gone.id, ['openid']);
        await store.saveConsent('user-alice', kept.id, ['openid']);

        expect(await store.deleteClient(gone.id)).toBe(true);
        for (const grant of goneGrants) {
          expect(await store.findAccessToken(grant.access.ref)).toBeUndefined();
          expect(await store.findRefreshToken(grant.refresh!.ref)).toBeUndefined();
        }
        expect(await store.getConsent('user-alice', gone.id)).toBeUndefined();
        expect(await store.findAccessToken(keptGrant.access.ref)).toStrictEqual(accessView(keptGrant.code, keptGrant.access));
        expect(await store.getConsent('user-alice', kept.id)).toEqual(['openid']);
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

    describe('refresh (RFC 6749 6, RFC 9700 4.14.2)', () => {
      /** A refresh whose answer reached the client: rotated, then confirmed. */
      async function rotateAndConfirm(presented: TokenRef, tokens = nextTokens(presented.grantId)) {
        expect(await store.rotateRefreshToken(presented, tokens)).toBe('rotated');
        await store.confirmRotation(tokens.refresh.ref);
        return tokens;
      }

      /** Presents `presented` and expects `outcome`, with nothing stored. */
      async function refused(presented: TokenRef, outcome: 'reused' | 'invalid', graceMs?: number) {
        const tokens = nextTokens(presented.grantId);
        expect(await store.rotateRefreshToken(presented, tokens, graceMs)).toBe(outcome);
        expect(await store.findAccessToken(tokens.access.ref)).toBeUndefined();
        expect(await store.findRefreshToken(tokens.refresh.ref)).toBeUndefined();
      }

      it('RFC 6749 6: rotates: the new tokens work, the presented token becomes an earlier generation, and an access token lasts until two refreshes later', async () => {
        const { code, access: access0, refresh: refresh0 } = await issueGrant(store);
        const grantId = code.ref.grantId;
        const first = await rotateAndConfirm(refresh0!.ref);
        expect(await store.findRefreshToken(first.refresh.ref)).toStrictEqual(refreshView(code, first.refresh));
        expect(await store.findRefreshToken(refresh0!.ref)).toStrictEqual(refreshView(code, refresh0!, { rotatedAt: BASE_TIME }));
        expect(await store.findAccessToken(access0.ref)).toStrictEqual(accessView(code, access0));
        expect(await store.findAccessToken(first.access.ref)).toStrictEqual(accessView(code, first.access));

        const second = await rotateAndConfirm(first.refresh.ref);
        expect(await store.findAccessToken(access0.ref)).toBeUndefined();
        expect(await store.findAccessToken(first.access.ref)).toStrictEqual(accessView(code, first.access));
        expect(await store.findAccessToken(second.access.ref)).toStrictEqual(accessView(code, second.access));
        expect(await store.findRefreshToken(refresh0!.ref)).toStrictEqual(refreshView(code, refresh0!, {}));
        expect(await store.findRefreshToken(first.refresh.ref)).toStrictEqual(refreshView(code, first.refresh, { rotatedAt: BASE_TIME }));
        expect(await store.findRefreshToken(ref(grantId))).toBeUndefined();
      });

      it('RFC 6749 6: stores a narrowed access token while the new refresh token keeps the granted scope', async () => {
        const { code, refresh } = await issueGrant(store);
        const narrowed = nextTokens(code.ref.grantId, { scope: ['openid'] });
        expect(await store.rotateRefreshToken(refresh!.ref, narrowed)).toBe('rotated');
        expect((await store.findAccessToken(narrowed.access.ref))?.scope).toStrictEqual(['openid']);
        expect((await store.findRefreshToken(narrowed.refresh.ref))?.scope).toStrictEqual(code.scope);
      });

      it('RFC 9700 4.14.2: once confirmed, the previous and an older generation are reused, anything else invalid, storing nothing either way', async () => {
        const { code, refresh: refresh0 } = await issueGrant(store);
        const grantId = code.ref.grantId;
        const first = await rotateAndConfirm(refresh0!.ref);
        const current = await rotateAndConfirm(first.refresh.ref);

        await refused(first.refresh.ref, 'reused');
        await refused(refresh0!.ref, 'reused');
        await refused(ref(grantId), 'invalid');
        await refused({ grantId, hash: current.access.ref.hash }, 'invalid');
        // A known hash under another grant id is that grant's business, not this one's.
        await refused({ grantId: fresh('grant'), hash: refresh0!.ref.hash }, 'invalid');
        expect(await store.findRefreshToken(current.refresh.ref)).toStrictEqual(refreshView(code, current.refresh));
        expect(await store.rotateRefreshToken(current.refresh.ref, nextTokens(grantId))).toBe('rotated');
      });

      it(`RFC 9700 4.14.2: remembers the ${EARLIER_REFRESH_TOKENS} refresh tokens before the current one; an older one is merely unknown`, async () => {
        const { refresh } = await issueGrant(store);
        const chain = [refresh!.ref];
        for (let i = 0; i < EARLIER_REFRESH_TOKENS + 1; i += 1) chain.push((await rotateAndConfirm(chain.at(-1)!)).refresh.ref);
        // chain.at(-1) is current; the EARLIER_REFRESH_TOKENS before it are remembered.
        await refused(chain[0]!, 'invalid');
        expect(await store.findRefreshToken(chain[0]!)).toBeUndefined();
        expect((await store.findRefreshToken(chain[1]!))?.consumed).toBe(true);
        await refused(chain[1]!, 'reused');
      });

      it('RFC 9700 4.14.2: while a rotation is pending, the previous token retried gets new tokens; the first successor dies and is a reuse when presented; the previous access token stays', async () => {
        const { code, access: access0, refresh: refresh0 } = await issueGrant(store);
        const grantId = code.ref.grantId;
        const lost = nextTokens(grantId);
        expect(await store.rotateRefreshToken(refresh0!.ref, lost)).toBe('rotated');
        clock.now = BASE_TIME + 10 * MINUTE;
        const retry = nextTokens(grantId);
        expect(await store.rotateRefreshToken(refresh0!.ref, retry)).toBe('rotated');

        expect(await store.findRefreshToken(retry.refresh.ref)).toStrictEqual(refreshView(code, retry.refresh));
        expect(await store.findRefreshToken(refresh0!.ref)).toStrictEqual(refreshView(code, refresh0!, { rotatedAt: BASE_TIME }));
        expect(await store.findRefreshToken(lost.refresh.ref)).toStrictEqual(refreshView(code, lost.refresh, {}));
        expect(await store.findAccessToken(lost.access.ref)).toBeUndefined();
        expect(await store.findAccessToken(retry.access.ref)).toStrictEqual(accessView(code, retry.access));
        expect(await store.findAccessToken(access0.ref)).toStrictEqual(accessView(code, access0));
        // Confirming the dead successor confirms nothing: the rotation is still pending.
        await store.confirmRotation(lost.refresh.ref);
        const again = nextTokens(grantId);
        expect(await store.rotateRefreshToken(refresh0!.ref, again)).toBe('rotated');
        await refused(lost.refresh.ref, 'reused');
      });

      it('RFC 9700 4.14.2: after the confirmation, a retry of the rotation is a reuse', async () => {
        const { code, refresh } = await issueGrant(store);
        const next = nextTokens(code.ref.grantId);
        expect(await store.rotateRefreshToken(refresh!.ref, next)).toBe('rotated');
        await store.confirmRotation(next.refresh.ref);
        await refused(refresh!.ref, 'reused');
        expect(await store.findRefreshToken(next.refresh.ref)).toStrictEqual(refreshView(code, next.refresh));
      });

      it('RFC 9700 4.14.2: presenting the successor ends the pending state: the token before it is a reuse', async () => {
        const { code, refresh } = await issueGrant(store);
        const successor = nextTokens(code.ref.grantId);
        expect(await store.rotateRefreshToken(refresh!.ref, successor)).toBe('rotated');
        const after = nextTokens(code.ref.grantId);
        expect(await store.rotateRefreshToken(successor.refresh.ref, after)).toBe('rotated');
        await refused(refresh!.ref, 'reused');
        // The successor's own rotation is pending: its retry is still answered.
        expect(await store.rotateRefreshToken(successor.refresh.ref, nextTokens(code.ref.grantId))).toBe('rotated');
      });

      it('RFC 9700 4.14.2: an opt-in grace lets the previous token repeat a confirmed rotation, counted from the rotation, and never once the successor was used', async () => {
        const { code, refresh: refresh0 } = await issueGrant(store);
        const grantId = code.ref.grantId;
        await rotateAndConfirm(refresh0!.ref);
        clock.now = BASE_TIME + MINUTE;
        const retry = nextTokens(grantId);
        expect(await store.rotateRefreshToken(refresh0!.ref, retry, MINUTE)).toBe('rotated');
        await store.confirmRotation(retry.refresh.ref);
        expect(await store.findRefreshToken(retry.refresh.ref)).toStrictEqual(refreshView(code, retry.refresh));
        clock.now = BASE_TIME + MINUTE + 1;
        await refused(refresh0!.ref, 'reused', MINUTE);

        clock.now = BASE_TIME;
        const { refresh: other } = await issueGrant(store);
        const successor = await rotateAndConfirm(other!.ref);
        await rotateAndConfirm(successor.refresh.ref);
        await refused(other!.ref, 'reused', HOUR);
      });

      it('RFC 9700 4.14.2: a retry asked for before the current generation was installed changes nothing and is no reuse', async () => {
        const { code, refresh } = await issueGrant(store);
        clock.now = BASE_TIME + 1000;
        const current = await rotateAndConfirm(refresh!.ref);
        clock.now = BASE_TIME;
        await refused(refresh!.ref, 'invalid');
        expect(await store.findRefreshToken(current.refresh.ref)).toStrictEqual(refreshView(code, current.refresh));

        // Nor does one older than the retry that made the current generation.
        const { code: code2, refresh: refresh2 } = await issueGrant(store);
        clock.now = BASE_TIME + 1000;
        expect(await store.rotateRefreshToken(refresh2!.ref, nextTokens(code2.ref.grantId))).toBe('rotated');
        clock.now = BASE_TIME + 3000;
        const retry = nextTokens(code2.ref.grantId);
        expect(await store.rotateRefreshToken(refresh2!.ref, retry)).toBe('rotated');
        clock.now = BASE_TIME + 2000;
        await refused(refresh2!.ref, 'invalid');
        expect(await store.findRefreshToken(retry.refresh.ref)).toStrictEqual(refreshView(code2, retry.refresh));
      });

      it('RFC 9700 4.14.2: of 20 concurrent refreshes with one token, each gets tokens while the rotation is pending; one successor stays current and every other is a reuse', async () => {
        const { code, refresh } = await issueGrant(store);
        const attempts = Array.from({ length: 20 }, () => nextTokens(code.ref.grantId));
        const outcomes = await Promise.all(attempts.map((tokens) => store.rotateRefreshToken(refresh!.ref, tokens)));
        expect(outcomes).toStrictEqual(attempts.map(() => 'rotated'));
        const found = await Promise.all(attempts.map((tokens) => store.findRefreshToken(tokens.refresh.ref)));
        expect(found.filter((record) => record?.consumed === false)).toHaveLength(1);
        // The replaced successors are earlier generations, as many as the record remembers.
        const dead = attempts.filter((_, i) => found[i]?.consumed === true);
        expect(dead).toHaveLength(EARLIER_REFRESH_TOKENS - 1);
        for (const tokens of dead) await refused(tokens.refresh.ref, 'reused');
      });

      it('RFC 9700 4.14.2: once confirmed, 20 concurrent presentations of the rotated-out token are all reuses', async () => {
        const { code, refresh } = await issueGrant(store);
        const next = await rotateAndConfirm(refresh!.ref);
        const attempts = Array.from({ length: 20 }, () => nextTokens(code.ref.grantId));
        const outcomes = await Promise.all(attempts.map((tokens) => store.rotateRefreshToken(refresh!.ref, tokens)));
        expect(outcomes).toStrictEqual(attempts.map(() => 'reused'));
        expect(await store.findRefreshToken(next.refresh.ref)).toStrictEqual(refreshView(code, next.refresh));
      });

      it('neither finds nor rotates an expired refresh token, current or earlier', async () => {
        const { code, refresh } = await issueGrant(store);
        const grantId = code.ref.grantId;
        const next = { access: accessToken(grantId), refresh: refreshToken(grantId, { expiresAt: BASE_TIME + 2 * HOUR }) };
        expect(await store.rotateRefreshToken(refresh!.ref, next)).toBe('rotated');
        clock.now = next.refresh.expiresAt;
        expect(await store.findRefreshToken(next.refresh.ref)).toBeUndefined();
        expect(await store.rotateRefreshToken(next.refresh.ref, nextTokens(grantId))).toBe('invalid');
        clock.now = refresh!.expiresAt;
        expect(await store.findRefreshToken(refresh!.ref)).toBeUndefined();
        expect(await store.rotateRefreshToken(refresh!.ref, nextTokens(grantId))).toBe('invalid');
      });

      it(`holds a grant in bounded space however often it is refreshed (${refreshes} refreshes)`, async () => {
        const { code, refresh } = await issueGrant(store);
        const grantId = code.ref.grantId;
        let presented = refresh!.ref;
        const refreshOnce = async () => {
          const tokens = nextTokens(grantId);
          expect(await store.rotateRefreshToken(presented, tokens)).toBe('rotated');
          presented = tokens.refresh.ref;
          return tokens;
        };
        const first = await refreshOnce();
        // Once the list of earlier refresh tokens is full, the record stops growing.
        for (let i = 1; i < EARLIER_REFRESH_TOKENS + 2; i += 1) await refreshOnce();
        const settled = await footprint?.(grantId);
        if (settled !== undefined) expect(settled).toBeGreaterThan(0);
        for (let i = EARLIER_REFRESH_TOKENS + 2; i < refreshes - 1; i += 1) await refreshOnce();
        const last = await refreshOnce();
        if (settled !== undefined) expect(await footprint!(grantId)).toBe(settled);
        expect(await store.findAccessToken(first.access.ref)).toBeUndefined();
        expect(await store.findAccessToken(last.access.ref)).toStrictEqual(accessView(code, last.access));
      }, 300_000);
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

    describe('one-time ids', () => {
      it('answers true for the first use of an id and false for every later one until it expires', async () => {
        const id = fresh('once');
        expect(await store.useOnce(id, BASE_TIME + 10 * MINUTE)).toBe(true);
        expect(await store.useOnce(id, BASE_TIME + 10 * MINUTE)).toBe(false);
        clock.now = BASE_TIME + 9 * MINUTE;
        expect(await store.useOnce(id, BASE_TIME + 10 * MINUTE)).toBe(false);
        expect(await store.useOnce(fresh('once'), BASE_TIME + 10 * MINUTE)).toBe(true);
      });

      it('forgets an id once its expiry passed', async () => {
        const id = fresh('once');
        expect(await store.useOnce(id, BASE_TIME + MINUTE)).toBe(true);
        clock.now = BASE_TIME + MINUTE + 1000;
        expect(await store.useOnce(id, clock.now + MINUTE)).toBe(true);
        expect(await store.useOnce(id, clock.now + MINUTE)).toBe(false);
      });

      it('lets exactly one of 20 concurrent callers use an id', async () => {
        const id = fresh('once');
        const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.useOnce(id, BASE_TIME + MINUTE)));
        expect(outcomes.filter(Boolean)).toHaveLength(1);
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
  });
}
