/**
 * The records and steps the OAuthStore conformance concerns build their tests from, and what they
 * share of the one store under test (ConformanceSuite).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  AuthorizedUser,
  ConsumedMarker,
  NewToken,
  NewTokens,
  OAuthClientRecord,
  OAuthStore,
  RefreshTokenRecord,
  TokenRef,
} from '../../../src/oauth/store/types.js';

/**
 * The backend's one store, built in the entry's beforeAll, and the clock it reads. A concern reads
 * `store` in a beforeAll of its own, registered after the entry's and so run after it.
 */
export interface ConformanceSuite {
  clock: { now: number };
  readonly store: OAuthStore;
  readonly footprint: ((grantId: string) => Promise<number>) | undefined;
}

/** A fixed instant, so the suite reads the same whatever the wall clock says. */
export const BASE_TIME = Date.UTC(2027, 0, 15, 12, 0, 0);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

let sequence = 0;
/** An id no other test (of this run or a concurrent one) uses. */
export function fresh(label: string): string {
  sequence += 1;
  return `${label}-${sequence}-${randomBytes(3).toString('hex')}`;
}

/** A SHA-256 base64url-like hash, as the OAuth server would compute from a secret. */
export function fakeHash(): string {
  return randomBytes(32).toString('base64url');
}

export function ref(grantId: string): TokenRef {
  return { grantId, hash: fakeHash() };
}

export const alice: AuthorizedUser = { sub: 'user-alice', claims: { name: 'Alice', email: 'alice@example.com', email_verified: true } };

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
export function refreshView(code: AuthorizationCodeRecord, refresh: NewToken, earlier?: { rotatedAt?: number }): RefreshTokenRecord & ConsumedMarker {
  const view = { ref: refresh.ref, clientId: code.clientId, scope: code.scope, user: code.user, authTime: code.authTime, expiresAt: refresh.expiresAt };
  if (!earlier) return { ...view, consumed: false };
  return earlier.rotatedAt === undefined ? { ...view, consumed: true } : { ...view, consumed: true, rotatedAt: earlier.rotatedAt };
}

export function clientRecord(overrides: Partial<OAuthClientRecord> = {}): OAuthClientRecord {
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
export async function winners(count: number, call: () => Promise<boolean>): Promise<number> {
  const results = await Promise.all(Array.from({ length: count }, call));
  return results.filter(Boolean).length;
}
