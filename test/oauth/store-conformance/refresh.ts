/**
 * OAuthStore conformance. Refresh (RFC 6749 6, RFC 9700 4.14.2): rotation, reuse of earlier
 * generations, the pending rotation and its retries, concurrency, expiry, and a grant's bounded
 * size.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EARLIER_REFRESH_TOKENS, LATE_WRITE_MS } from '../../../src/oauth/store/grant-record.js';
import type { OAuthStore, TokenRef } from '../../../src/oauth/store/types.js';
import { accessToken, accessView, BASE_TIME, type ConformanceSuite, fresh, HOUR, issueGrant, MINUTE, nextTokens, ref, refreshToken, refreshView } from './fixtures.js';

/**
 * Refreshes of one grant in the bound check. The record is full after EARLIER_REFRESH_TOKENS + 1
 * refreshes; about thirty times as many show whether anything still grows with each refresh.
 */
const REFRESHES = 500;

export function describeRefreshConformance(suite: ConformanceSuite): void {
  const { clock } = suite;
  let store: OAuthStore;
  let footprint: ConformanceSuite['footprint'];
  beforeAll(() => {
    ({ store, footprint } = suite);
  });

  describe('refresh (RFC 6749 6, RFC 9700 4.14.2)', () => {
    /** A refresh whose answer reached the client: rotated, then confirmed. */
    async function rotateAndConfirm(presented: TokenRef, tokens = nextTokens(presented.grantId)) {
      expect(await store.rotateRefreshToken(presented, tokens)).toBe('rotated');
      await store.confirmRotation(tokens.refresh.ref);
      return tokens;
    }

    /** Presents `presented` and expects `outcome`, with nothing stored. */
    async function refused(presented: TokenRef, outcome: 'reused' | 'invalid', graceMs?: number, lateWriteMs?: number) {
      const tokens = nextTokens(presented.grantId);
      expect(await store.rotateRefreshToken(presented, tokens, graceMs, lateWriteMs)).toBe(outcome);
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

    it('RFC 9700 4.14.2: a retry asked for the store deadline or more before the current generation was installed (a write delivered late) changes nothing and is no reuse', async () => {
      const { code, refresh } = await issueGrant(store);
      // 1000 ms: the store deadline unless the platform passes its own (LATE_WRITE_MS).
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

    it('RFC 9700 4.14.2: a refresh stamped less than the store deadline before the current generation (it waited for the record behind another with the same token) is a retry: both get tokens, and the replaced ones are a reuse', async () => {
      const { code, refresh } = await issueGrant(store);
      const grantId = code.ref.grantId;
      // The other party's request, stamped later, took the record first.
      clock.now = BASE_TIME + LATE_WRITE_MS - 1;
      const first = nextTokens(grantId);
      expect(await store.rotateRefreshToken(refresh!.ref, first)).toBe('rotated');
      clock.now = BASE_TIME;
      const second = nextTokens(grantId);
      expect(await store.rotateRefreshToken(refresh!.ref, second)).toBe('rotated');
      expect(await store.findRefreshToken(second.refresh.ref)).toStrictEqual(refreshView(code, second.refresh));
      expect(await store.findAccessToken(first.access.ref)).toBeUndefined();
      // Whoever holds the replaced tokens ends the grant when it presents them.
      await refused(first.refresh.ref, 'reused');

      // Once the first answer was written, the stamped-earlier request is a reuse: the grant ends.
      const other = await issueGrant(store);
      clock.now = BASE_TIME + LATE_WRITE_MS - 1;
      await rotateAndConfirm(other.refresh!.ref);
      clock.now = BASE_TIME;
      await refused(other.refresh!.ref, 'reused');
    });

    it('RFC 9700 4.14.2: the store deadline the platform passes tells a late write from a concurrent refresh; below 1 ms it counts as 1 ms', async () => {
      const deadline = 5000;
      const { code, refresh } = await issueGrant(store);
      const grantId = code.ref.grantId;
      clock.now = BASE_TIME + deadline;
      const current = nextTokens(grantId);
      expect(await store.rotateRefreshToken(refresh!.ref, current, 0, deadline)).toBe('rotated');
      clock.now = BASE_TIME;
      await refused(refresh!.ref, 'invalid', 0, deadline);
      expect(await store.findRefreshToken(current.refresh.ref)).toStrictEqual(refreshView(code, current.refresh));
      clock.now = BASE_TIME + 1;
      const concurrent = nextTokens(grantId);
      expect(await store.rotateRefreshToken(refresh!.ref, concurrent, 0, deadline)).toBe('rotated');
      await refused(current.refresh.ref, 'reused', 0, deadline);

      const other = await issueGrant(store);
      clock.now = BASE_TIME + 1;
      expect(await store.rotateRefreshToken(other.refresh!.ref, nextTokens(other.code.ref.grantId), 0, 0)).toBe('rotated');
      // Stamped at the same instant: concurrent; 1 ms before: late.
      expect(await store.rotateRefreshToken(other.refresh!.ref, nextTokens(other.code.ref.grantId), 0, 0)).toBe('rotated');
      clock.now = BASE_TIME;
      await refused(other.refresh!.ref, 'invalid', 0, 0);
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

    it(`holds a grant in bounded space however often it is refreshed (${REFRESHES} refreshes)`, async () => {
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
      for (let i = EARLIER_REFRESH_TOKENS + 2; i < REFRESHES - 1; i += 1) await refreshOnce();
      const last = await refreshOnce();
      // A counter may gain a digit or two on the way; one more earlier token alone would add dozens of bytes.
      if (settled !== undefined) expect(await footprint!(grantId)).toBeLessThanOrEqual(settled + 4);
      expect(await store.findAccessToken(first.access.ref)).toBeUndefined();
      expect(await store.findAccessToken(last.access.ref)).toStrictEqual(accessView(code, last.access));
    }, 60_000);
  });
}
