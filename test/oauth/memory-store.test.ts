/**
 * What only the memory OAuthStore can get wrong: growth (sweeps, deleteExpired), the synchronous
 * read of the quota guard, the clients given in its options. The conformance run is in stores.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryOAuthStore } from '../../src/oauth/store/index.js';
import { accessView, BASE_TIME, codeRecord, HOUR, issueGrant, MINUTE } from './store-conformance.js';
import { refreshOnce, testClock } from './store-helpers.js';

describe('memory OAuthStore', () => {
  it('sweeps expired grants every so many new grants, so memory stays bounded by the live ones', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read, sweepEvery: 10 });
    for (let i = 0; i < 50; i += 1) await store.saveCode(codeRecord(`grant-${i}`, { expiresAt: BASE_TIME + MINUTE }));
    expect(store.size).toBe(50);

    clock.now = BASE_TIME + 2 * MINUTE;
    // The next sweep comes at the latest after as many new grants as the last sweep left.
    for (let i = 0; i < 40; i += 1) await store.saveCode(codeRecord(`live-${i}`, { expiresAt: BASE_TIME + HOUR }));
    expect(store.size).toBe(40);
  });

  it('deleteExpired drops a grant once its last part expired', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read });
    await store.saveCode(codeRecord('grant-a'));
    await issueGrant(store, { grantId: 'grant-b', access: { expiresAt: BASE_TIME + HOUR }, refresh: { expiresAt: BASE_TIME + 24 * HOUR } });
    expect(store.size).toBe(2);

    clock.now = BASE_TIME + 2 * HOUR;
    expect(await store.deleteExpired()).toBe(1);
    expect(store.size).toBe(1);
    clock.now = BASE_TIME + 25 * HOUR;
    expect(await store.deleteExpired()).toBe(1);
    expect(store.size).toBe(0);
  });

  it('findAccessTokenSync (the quota guard\'s path) answers exactly as findAccessToken, with one frozen record: live, expired, retired, revoked, unknown', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.read });
    const { code, access, refresh } = await issueGrant(store, { grantId: 'grant-a', access: { expiresAt: BASE_TIME + MINUTE } });
    const refs = [access.ref, { grantId: 'grant-a', hash: 'another-hash' }, { grantId: 'grant-z', hash: access.ref.hash }];
    for (const ref of refs) expect(store.findAccessTokenSync(ref)).toStrictEqual(await store.findAccessToken(ref));
    expect(store.findAccessTokenSync(access.ref)).toStrictEqual(accessView(code, access));
    expect(store.findAccessTokenSync(access.ref)).toBe(store.findAccessTokenSync(access.ref));
    expect(Object.isFrozen(store.findAccessTokenSync(access.ref)?.user?.claims)).toBe(true);

    clock.now = access.expiresAt;
    expect(store.findAccessTokenSync(access.ref)).toBeUndefined();
    clock.now = BASE_TIME;
    const first = await refreshOnce(store, refresh!.ref);
    await refreshOnce(store, first.tokens.refresh.ref);
    expect(store.findAccessTokenSync(access.ref)).toBeUndefined();
    expect(store.findAccessTokenSync(first.tokens.access.ref)).toStrictEqual(accessView(code, first.tokens.access));
    await store.revokeGrant('grant-a');
    expect(store.findAccessTokenSync(first.tokens.access.ref)).toBeUndefined();
  });

  it('starts with the clients given in its options', async () => {
    const client = { id: 'preloaded', name: 'Preloaded', redirectUris: ['https://a.example/cb'], scopes: ['openid'], grants: ['authorization_code' as const] };
    const store = createMemoryOAuthStore({ clients: [client] });
    expect(await store.getClient('preloaded')).toStrictEqual(client);
  });

  it('refuses a malformed client in its options when it is created, naming the field', () => {
    const client = { id: 'preloaded-bad', name: 'Preloaded', redirectUris: ['not a url'], scopes: ['openid'], grants: ['authorization_code' as const] };
    expect(() => createMemoryOAuthStore({ clients: [client] })).toThrow(/redirectUris\[0\]: must be an absolute http\(s\) URL/);
  });

  it('rejects a sweep interval that is not a positive integer', () => {
    expect(() => createMemoryOAuthStore({ sweepEvery: 0 })).toThrow(TypeError);
  });
});
