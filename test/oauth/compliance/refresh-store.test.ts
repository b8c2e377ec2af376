/**
 * Refresh-token rotation as the store carries it (RFC 6749 6, RFC 9700 4.14.2), through HTTP on
 * every adapter: a refresh whose tokens could not be stored changes nothing; a refresh whose
 * answer was lost may be retried with the same token within the grace, and past it that token
 * is a reuse that ends the grant; without a grace two refreshes racing with one token end the
 * grant; an access token lasts until two refreshes later, and a grant keeps one store entry
 * however often it is refreshed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryOAuthStore, type OAuthStore } from '../../../src/oauth/store/index.js';
import { ADAPTER_NAMES, closeHosts, startHost, testClock, type TestHost, type TokenResponseBody } from './helpers.js';

afterEach(closeHosts);

const SCOPE = 'openid offline_access';

async function refreshed(host: TestHost, refreshToken: string): Promise<TokenResponseBody> {
  const res = await host.refresh(refreshToken);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as TokenResponseBody;
}

describe.each(ADAPTER_NAMES)('refresh and the store on %s', (adapter) => {
  it('RFC 6749 6: a refresh whose tokens could not be stored changes nothing: the retry with the same refresh token succeeds and the grant lives on', async () => {
    const clock = testClock();
    const memory = createMemoryOAuthStore({ now: clock.now });
    let failNext = false;
    const store: OAuthStore = {
      ...memory,
      rotateRefreshToken: (presented, next) => {
        if (!failNext) return memory.rotateRefreshToken(presented, next);
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

  it('RFC 9700 4.14.2: a refresh stored but never answered is retried with the same refresh token within the grace, and the grant lives on', async () => {
    const clock = testClock();
    const memory = createMemoryOAuthStore({ now: clock.now });
    let loseNext = false;
    const store: OAuthStore = {
      ...memory,
      // The rotation commits, then its answer is lost on the way back (a timeout, a reset).
      rotateRefreshToken: async (presented, next, grace) => {
        const outcome = await memory.rotateRefreshToken(presented, next, grace);
        if (!loseNext) return outcome;
        loseNext = false;
        throw new Error('connection reset by the store');
      },
    };
    const host = await startHost(adapter, { clock, oauth: { store } });
    const first = await host.tokens({ scope: SCOPE });

    loseNext = true;
    expect((await host.refresh(first.refresh_token!)).status).toBe(503);
    clock.advance(30);
    const retry = await refreshed(host, first.refresh_token!);
    expect((await host.userinfo(retry.access_token)).status).toBe(200);
    const next = await refreshed(host, retry.refresh_token!);
    expect((await host.userinfo(next.access_token)).status).toBe(200);
  });

  it('RFC 9700 4.14.2: past the retry grace, the rotated-out refresh token is a reuse and ends the grant', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, oauth: { refreshRetryGraceSeconds: 60 } });
    const first = await host.tokens({ scope: SCOPE });
    const second = await refreshed(host, first.refresh_token!);
    clock.advance(61);

    const reuse = await host.refresh(first.refresh_token!);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await host.userinfo(second.access_token)).status).toBe(401);
    expect((await host.refresh(second.refresh_token!)).body.error).toBe('invalid_grant');
  });

  it('RFC 9700 4.14.2: within the grace, the token a retry replaced is no longer valid, and the retry\'s tokens carry the grant', async () => {
    const host = await startHost(adapter);
    const first = await host.tokens({ scope: SCOPE });
    const lost = await refreshed(host, first.refresh_token!);
    const retry = await refreshed(host, first.refresh_token!);

    const stale = await host.refresh(lost.refresh_token!);
    expect(stale.body.error).toBe('invalid_grant');
    expect((await host.userinfo(retry.access_token)).status).toBe(200);
    await refreshed(host, retry.refresh_token!);
  });

  it('RFC 9700 4.14.2: with no retry grace, of two refreshes racing with one refresh token one gets tokens, the other invalid_grant, and the grant ends', async () => {
    const host = await startHost(adapter, { oauth: { refreshRetryGraceSeconds: 0 } });
    const first = await host.tokens({ scope: SCOPE });
    const answers = await Promise.all([host.refresh(first.refresh_token!), host.refresh(first.refresh_token!)]);
    expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
    const winner = answers.find((res) => res.status === 200)!.body as TokenResponseBody;
    expect(answers.find((res) => res.status === 400)!.body.error).toBe('invalid_grant');

    expect((await host.userinfo(winner.access_token)).status).toBe(401);
    expect((await host.refresh(winner.refresh_token!)).body.error).toBe('invalid_grant');
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
