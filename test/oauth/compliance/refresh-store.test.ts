/**
 * Refresh-token rotation as the store carries it (RFC 6749 6, RFC 9700 4.14.2), through HTTP on
 * every adapter: a refresh whose tokens could not be stored changes nothing; a refresh whose
 * answer was lost stays pending and may be repeated with the same token, however late; once an
 * answer was written, any earlier refresh token presented again is a reuse that ends the grant;
 * an opt-in grace never hands out tokens once the successor was used; an access token lasts until
 * two refreshes later, and a grant keeps one store entry however often it is refreshed.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { OAuthEvent } from '../../../src/oauth/events.js';
import { createMemoryOAuthStore, type OAuthStore, type RotationOutcome } from '../../../src/oauth/store/index.js';
import { describePostgres, describeRedis } from '../../support/services.js';
import { memoryStores, postgresStores, redisStores, type StoreFactory } from '../shared-stores.js';
import { ADAPTER_NAMES, closeHosts, losingRotationAnswers, type Client, startHost, testClock, type HostSetup, type TestHost, type TokenResponseBody } from './helpers.js';

afterEach(closeHosts);

const SCOPE = 'openid offline_access';
const ADMIN_TOKEN = 'operator-token-0123456789abcdef0123456789';
/** Races of two refreshes with one token, per store: enough to meet the few in ten whose later-stamped request reaches the grant first. */
const RACES = 40;

async function refreshed(host: TestHost, refreshToken: string, client?: Client): Promise<TokenResponseBody> {
  const res = await host.refresh(refreshToken, {}, client);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as TokenResponseBody;
}

/** A host whose events are kept. */
async function hostWithEvents(adapter: (typeof ADAPTER_NAMES)[number], setup: HostSetup = {}): Promise<{ host: TestHost; reuses: () => number }> {
  const events: OAuthEvent[] = [];
  const host = await startHost(adapter, { ...setup, platform: { ...setup.platform, onEvent: (event) => void events.push(event as OAuthEvent) } });
  return { host, reuses: () => events.filter((event) => event.type === 'refresh_token.reused').length };
}

/** The grant has ended: its last tokens no longer work. */
async function expectGrantEnded(host: TestHost, last: TokenResponseBody): Promise<void> {
  expect((await host.userinfo(last.access_token)).status).toBe(401);
  expect((await host.refresh(last.refresh_token!)).body.error).toBe('invalid_grant');
}

describe.each(ADAPTER_NAMES)('refresh and the store on %s', (adapter) => {
  it('RFC 6749 6: a refresh whose tokens could not be stored changes nothing: the retry with the same refresh token succeeds and the grant lives on', async () => {
    const clock = testClock();
    const memory = createMemoryOAuthStore({ now: clock.now });
    let failNext = false;
    const store: OAuthStore = {
      ...memory,
      rotateRefreshToken: (presented, next, grace, lateWriteMs) => {
        if (!failNext) return memory.rotateRefreshToken(presented, next, grace, lateWriteMs);
        failNext = false;
        return Promise.reject(new Error('connection reset by the store'));
      },
    };
    const host = await startHost(adapter, { clock, oauth: { store } });
    const first = await host.tokens({ scope: SCOPE });

    failNext = true;
    const failed = await host.refresh(first.refresh_token!);
    expect(failed.status).toBeGreaterThanOrEqual(500);

    const retry = await refreshed(host, first.refresh_token!);
    expect((await host.userinfo(retry.access_token)).status).toBe(200);
    expect((await host.userinfo(first.access_token)).status).toBe(200);
    await refreshed(host, retry.refresh_token!);
  });

  it('RFC 9700 4.14.2: a refresh stored but never answered stays pending: the same refresh token, even minutes later, gets fresh tokens and the grant lives on', async () => {
    const clock = testClock();
    const memory = createMemoryOAuthStore({ now: clock.now });
    // The rotation commits, then its answer is lost on the way back.
    const { store, loseNext } = losingRotationAnswers(memory);
    const { host, reuses } = await hostWithEvents(adapter, { clock, oauth: { store } });
    const first = await host.tokens({ scope: SCOPE });

    loseNext();
    expect((await host.refresh(first.refresh_token!)).status).toBe(503);
    clock.advance(300);
    const retry = await refreshed(host, first.refresh_token!);
    expect((await host.userinfo(retry.access_token)).status).toBe(200);
    expect((await host.userinfo(first.access_token)).status).toBe(200);
    const next = await refreshed(host, retry.refresh_token!);
    expect((await host.userinfo(next.access_token)).status).toBe(200);
    expect(reuses()).toBe(0);
  });

  it('RFC 9700 4.14.2: 10 replays of a rotated-out refresh token each get invalid_grant; the first ends the grant and refresh_token.reused is heard once', async () => {
    const { host, reuses } = await hostWithEvents(adapter);
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);

    for (let i = 0; i < 10; i += 1) {
      const replay = await host.refresh(first.refresh_token!);
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');
    }
    expect(reuses()).toBe(1);
    await expectGrantEnded(host, second);
  });

  it('RFC 9700 4.14.2: a rotated-out refresh token sent with a scope never granted is a reuse too: invalid_grant, the grant ends', async () => {
    const { host, reuses } = await hostWithEvents(adapter);
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);

    const replay = await host.refresh(first.refresh_token!, { scope: 'openid offline_access email' });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect(reuses()).toBe(1);
    await expectGrantEnded(host, second);
  });

  it('RFC 6749 6: the current refresh token asked for a scope never granted gets invalid_scope and keeps working', async () => {
    const host = await startHost(adapter);
    const first = await host.tokens({ scope: SCOPE });
    expect((await host.refresh(first.refresh_token!, { scope: 'openid offline_access email' })).body.error).toBe('invalid_scope');
    await refreshed(host, first.refresh_token!);
  });

  it('OIDC Core 11: once the operator takes offline_access from the client, its refresh tokens stop with invalid_grant', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: ADMIN_TOKEN } } });
    const operator = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const redirectUri = 'http://127.0.0.1:9/shop';
    const created = await host.http().post('/admin/clients').set(operator).send(JSON.stringify({ name: 'Shop', redirectUris: [redirectUri] }));
    expect(created.status, created.text).toBe(201);
    const shop = { id: created.body.data.client.id as string, secret: created.body.data.client_secret as string, redirectUri };
    const callback = await host.code({ client_id: shop.id, redirect_uri: redirectUri, scope: SCOPE });
    const issued = await host.exchange(callback.get('code')!, { client: shop });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const current = (await refreshed(host, (issued.body as TokenResponseBody).refresh_token!, shop)).refresh_token!;

    const changed = await host.http().patch(`/admin/clients/${shop.id}`).set(operator).send(JSON.stringify({ scopes: ['openid', 'profile'] }));
    expect(changed.status, changed.text).toBe(200);
    const next = await host.refresh(current, {}, shop);
    expect(next.status).toBe(400);
    expect(next.body.error).toBe('invalid_grant');
  });

  it('RFC 9700 4.14.2: a refresh token two rotations old ends the grant too', async () => {
    const { host, reuses } = await hostWithEvents(adapter);
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);
    const third = await refreshed(host, second.refresh_token!);

    expect((await host.refresh(first.refresh_token!)).body.error).toBe('invalid_grant');
    expect(reuses()).toBe(1);
    await expectGrantEnded(host, third);
  });

  it('RFC 9700 4.14.2: of two refreshes racing with one refresh token, whatever each got, once both present it the grant has ended, with one reuse event', async () => {
    const { host, reuses } = await hostWithEvents(adapter);
    const first = await host.tokens({ scope: SCOPE });
    const answers = await Promise.all([host.refresh(first.refresh_token!), host.refresh(first.refresh_token!)]);
    const won = answers.filter((res) => res.status === 200).map((res) => res.body as TokenResponseBody);
    expect(won.length).toBeGreaterThan(0);
    for (const tokens of won) await host.refresh(tokens.refresh_token!);

    expect(reuses()).toBe(1);
    for (const tokens of won) expect((await host.userinfo(tokens.access_token)).status).toBe(401);
  });

  it('RFC 9700 4.14.2: with the opt-in refreshRetryGraceSeconds, the rotated-out token repeats its refresh within the grace, never once its successor was used', async () => {
    const clock = testClock();
    const { host, reuses } = await hostWithEvents(adapter, { clock, oauth: { refreshRetryGraceSeconds: 60 } });
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);
    clock.advance(30);
    const retry = await refreshed(host, first.refresh_token!);
    expect((await host.refresh(second.refresh_token!)).body.error).toBe('invalid_grant');
    expect(reuses()).toBe(1);
    await expectGrantEnded(host, retry);

    const other = await host.tokens({ scope: SCOPE });
    const successor = await refreshed(host, other.refresh_token!);
    const used = await refreshed(host, successor.refresh_token!);
    clock.advance(1);
    expect((await host.refresh(other.refresh_token!)).body.error).toBe('invalid_grant');
    expect(reuses()).toBe(2);
    await expectGrantEnded(host, used);
  });

  it('RFC 9700 4.14.2: past the opt-in grace, the rotated-out refresh token is a reuse and ends the grant', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, oauth: { refreshRetryGraceSeconds: 60 } });
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);
    clock.advance(61);

    const reuse = await host.refresh(first.refresh_token!);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    await expectGrantEnded(host, second);
  });

  it('RFC 6749 6: an access token works until two refreshes later, and a grant refreshed 50 times keeps one store entry', async () => {
    const clock = testClock();
    const store = createMemoryOAuthStore({ now: clock.now });
    const host = await startHost(adapter, { clock, oauth: { store } });
    const issued = [await host.tokens({ scope: SCOPE })];
    expect(store.size).toBe(1);
    for (let i = 0; i < 50; i += 1) issued.push(await refreshed(host, issued.at(-1)!.refresh_token!));

    expect(store.size).toBe(1);
    const statuses = await Promise.all(issued.slice(-3).map(async ({ access_token }) => (await host.userinfo(access_token)).status));
    expect(statuses).toEqual([401, 200, 200]);
    expect((await host.userinfo(issued[0]!.access_token)).status).toBe(401);
  });
});

/**
 * A store whose confirmations can be awaited: the platform confirms a rotation after its answer
 * has left, so a test that replays at once would race it on a store across the network.
 */
function confirming(store: OAuthStore): { store: OAuthStore; confirmed(count: number): Promise<void> } {
  let done = 0;
  const waiting = new Set<() => void>();
  const wrapped: OAuthStore = {
    ...store,
    confirmRotation: async (successor) => {
      await store.confirmRotation(successor);
      done += 1;
      for (const check of waiting) check();
    },
  };
  const confirmed = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (done < count) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
    });
  return { store: wrapped, confirmed };
}

function describeStoreRefresh(factory: () => StoreFactory) {
  const stores = factory();
  afterAll(() => stores.close());

  it('RFC 9700 4.14.2: once the answer was written, a replay of the rotated-out refresh token ends the grant, with one refresh_token.reused', async () => {
    const { store, confirmed } = confirming(stores.open());
    const { host, reuses } = await hostWithEvents('express', { oauth: { store } });
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);
    await confirmed(1);
    for (let i = 0; i < 3; i += 1) expect((await host.refresh(first.refresh_token!)).body.error).toBe('invalid_grant');
    expect(reuses()).toBe(1);
    await expectGrantEnded(host, second);
  });

  it('RFC 9700 4.14.2: a confirmation the store failed is tried again, and a replay of the rotated-out refresh token then ends the grant', async () => {
    const { store: inner, confirmed } = confirming(stores.open());
    let failures = 2;
    const store: OAuthStore = {
      ...inner,
      confirmRotation: async (successor) => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('connection reset');
        }
        await inner.confirmRotation(successor);
      },
    };
    const { host, reuses } = await hostWithEvents('express', { oauth: { store } });
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);
    await confirmed(1);
    expect(failures).toBe(0);
    expect((await host.refresh(first.refresh_token!)).body.error).toBe('invalid_grant');
    expect(reuses()).toBe(1);
    await expectGrantEnded(host, second);
  });

  it('RFC 9700 4.14.2: a rotation stored but never answered is repeated by the same refresh token, and the grant lives on', async () => {
    const { store: inner } = confirming(stores.open());
    // The rotation commits, then its answer is lost on the way back.
    const { store, loseNext } = losingRotationAnswers(inner);
    const { host, reuses } = await hostWithEvents('express', { oauth: { store } });
    const first = await host.tokens({ scope: SCOPE });
    loseNext();
    expect((await host.refresh(first.refresh_token!)).status).toBe(503);
    const retry = await refreshed(host, first.refresh_token!);
    await refreshed(host, retry.refresh_token!);
    expect(reuses()).toBe(0);
  });

  it('RFC 9700 4.14.2: a refresh that reaches the store after its 503 and the retry that followed changes nothing: the retry\'s tokens live on, no reuse', async () => {
    let pinned: number | undefined;
    const inner = stores.open(() => pinned ?? Date.now());
    let holdNext = false;
    let held: (() => Promise<RotationOutcome>) | undefined;
    let confirmations: (() => Promise<void>)[] | undefined;
    const store: OAuthStore = {
      ...inner,
      rotateRefreshToken: (presented, next, grace, lateWriteMs) => {
        if (!holdNext) return inner.rotateRefreshToken(presented, next, grace, lateWriteMs);
        holdNext = false;
        // Stamped now, as a statement is when it leaves; carried out only when the test says so.
        const sentAt = Date.now();
        return new Promise<RotationOutcome>((resolve) => {
          held = () => {
            pinned = sentAt;
            const outcome = inner.rotateRefreshToken(presented, next, grace, lateWriteMs);
            pinned = undefined;
            void outcome.then(resolve);
            return outcome;
          };
        });
      },
      confirmRotation: (successor) => {
        if (!confirmations) return inner.confirmRotation(successor);
        return new Promise((resolve) => confirmations!.push(() => inner.confirmRotation(successor).then(resolve)));
      },
    };
    const { host, reuses } = await hostWithEvents('express', { oauth: { store, storeTimeoutMs: 200 } });
    const first = await host.tokens({ scope: SCOPE });

    holdNext = true;
    expect((await host.refresh(first.refresh_token!)).status).toBe(503);
    // The retry's answer is written, its confirmation not landed yet: its rotation is pending.
    confirmations = [];
    const retry = await refreshed(host, first.refresh_token!);
    expect(await held!()).toBe('invalid');
    for (const confirm of confirmations.splice(0)) await confirm();
    confirmations = undefined;

    expect((await host.userinfo(retry.access_token)).status).toBe(200);
    await refreshed(host, retry.refresh_token!);
    expect(reuses()).toBe(0);
  });

  it(`RFC 9700 4.14.2: of ${RACES} pairs of refreshes racing with one refresh token, none leaves one party with invalid_grant and the grant alive for the other`, async () => {
    const { host, reuses } = await hostWithEvents('express', { oauth: { store: stores.open() } });
    const seen = { both: 0, endedAtOnce: 0, undetected: 0 };
    for (let race = 0; race < RACES; race += 1) {
      const first = await host.tokens({ scope: SCOPE });
      const answers = await Promise.all([host.refresh(first.refresh_token!), host.refresh(first.refresh_token!)]);
      const won = answers.filter((res) => res.status === 200).map((res) => res.body as TokenResponseBody);
      for (const res of answers) if (res.status !== 200) expect(res.body.error).toBe('invalid_grant');
      // Each party that got tokens comes back with them, as a client or a thief does.
      const held = [...won];
      for (const tokens of won) {
        const next = await host.refresh(tokens.refresh_token!);
        if (next.status === 200) held.push(next.body as TokenResponseBody);
      }
      const live = await Promise.all(held.map(async (tokens) => (await host.userinfo(tokens.access_token)).status === 200));
      if (live.includes(true)) seen.undetected += 1;
      else if (won.length === 2) seen.both += 1;
      else seen.endedAtOnce += 1;
    }
    console.info(`refresh races on ${stores.label}: ${JSON.stringify({ races: RACES, ...seen })}`);
    expect(seen.undetected).toBe(0);
    // Whichever way each race went, it ended its grant as a reuse.
    expect(reuses()).toBe(RACES);
  }, 60_000);

  it('RFC 7009 2.1: revoking a rotated-out refresh token ends the grant; refreshing with either token then fails', async () => {
    const { store, confirmed } = confirming(stores.open());
    const host = await startHost('express', { oauth: { store } });
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);
    await confirmed(1);
    expect((await host.revoke({ token: first.refresh_token! })).status).toBe(200);
    expect((await host.refresh(first.refresh_token!)).body.error).toBe('invalid_grant');
    await expectGrantEnded(host, second);
  });
}

describe('refresh reuse on the memory store', () => describeStoreRefresh(memoryStores));
describeRedis('refresh reuse on the Redis store', () => describeStoreRefresh(redisStores));
describePostgres('refresh reuse on the PostgreSQL store', () => describeStoreRefresh(postgresStores));
