/**
 * The consent step (OIDC Core 3.1.2.4, RFC 6749 10.12 / 10.13) and what consent decides:
 * remembered scopes, prompt=consent, and offline_access (OIDC Core 11).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ADAPTER_NAMES,
  authorizeQuery,
  callbackOf,
  closeHosts,
  errorDescriptionsSeen,
  expectErrorPage,
  OTHER,
  RFC6749_DESCRIPTION,
  startHost,
  testClock,
  transactionOf,
  type Session,
} from './helpers.js';

afterEach(closeHosts);

const ALICE: Session = { user: 'alice' };
const BOB: Session = { user: 'bob' };

/** The same sealed transaction with its payload changed and the original signature kept. */
function withPayload(transaction: string, change: (payload: Record<string, unknown>) => void): string {
  const [body, mac] = transaction.split('.') as [string, string];
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
  change(payload);
  return `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
}

describe.each(ADAPTER_NAMES)('consent on %s', (adapter) => {
  describe('the consent page', () => {
    it('OIDC Core 3.1.2.4: names the client and the requested scopes in words, with Approve and Deny', async () => {
      const host = await startHost(adapter);
      const res = await host.authorize({ scope: 'openid profile email offline_access' }, ALICE);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('Relying Party');
      expect(res.text).toContain('Alice Liddell');
      for (const words of ['Sign you in', 'name and basic profile', 'email address', 'Keep access while you are away']) expect(res.text).toContain(words);
      expect(res.text).toMatch(/<button[^>]*name="decision"[^>]*value="approve"[^>]*>Approve<\/button>/);
      expect(res.text).toMatch(/<button[^>]*name="decision"[^>]*value="deny"[^>]*>Deny<\/button>/);
      expect(res.text).toMatch(new RegExp(`<form method="post" action="${host.issuer}/consent">`));
    });

    it('RFC 6749 10.13 (clickjacking): the page cannot be framed or cached', async () => {
      const host = await startHost(adapter);
      const res = await host.authorize({}, ALICE);
      expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('RFC 6749 10.12 (CSRF): a transaction whose payload was altered is refused with an error page', async () => {
      const host = await startHost(adapter);
      const transaction = transactionOf(await host.authorize({ scope: 'openid' }, ALICE));
      const tampered = [
        withPayload(transaction, (p) => (p.scope = ['openid', 'offline_access'])),
        withPayload(transaction, (p) => (p.redirectUri = 'http://127.0.0.1:9/evil')),
        `${transaction.slice(0, -2)}${transaction.endsWith('AA') ? 'BA' : 'AA'}`,
        `${transaction.slice(0, -1)}${String.fromCharCode(transaction.charCodeAt(transaction.length - 1) + 1)}`,
        transaction.split('.')[0]!,
        '',
      ];
      for (const value of tampered) {
        const res = await host.postForm('/oauth/consent', { transaction: value, decision: 'approve' }, {}, ALICE);
        expectErrorPage(res);
      }
      const missing = await host.postForm('/oauth/consent', { decision: 'approve' }, {}, ALICE);
      expectErrorPage(missing);
    });

    it('RFC 6749 10.12: a transaction older than its deadline (platform clock) is refused with an error page', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      const page = await host.authorize({}, ALICE);
      clock.advance(601);
      expectErrorPage(await host.decide(page, 'approve'));
    });

    it('RFC 6749 10.12: a transaction still inside its deadline is accepted', async () => {
      const clock = testClock();
      const host = await startHost(adapter, { clock });
      const page = await host.authorize({}, ALICE);
      clock.advance(590);
      expect(callbackOf(await host.decide(page, 'approve')).get('code')).toBeTruthy();
    });

    it('RFC 6749 10.12: a transaction POSTed by a different user (or nobody) is refused', async () => {
      const host = await startHost(adapter);
      const page = await host.authorize({}, ALICE);
      expectErrorPage(await host.decide(page, 'approve', BOB), 403);
      expectErrorPage(await host.decide(page, 'approve', {}), 403);
    });

    it('RFC 6749 4.1.2.1: Deny redirects with access_denied, state and iss, and remembers nothing', async () => {
      const host = await startHost(adapter);
      const page = await host.authorize({ state: 'a b+c/%?&=~' }, ALICE);
      const callback = callbackOf(await host.decide(page, 'deny'));
      expect(callback.get('error')).toBe('access_denied');
      expect(callback.get('state')).toBe('a b+c/%?&=~');
      expect(callback.get('iss')).toBe(host.issuer);
      expect(callback.get('code')).toBeNull();
      expect((await host.authorize({}, ALICE)).status).toBe(200);
    });
  });

  describe('withdrawing consent', () => {
    it('OIDC Core 3.1.2.1 prompt=consent: Deny withdraws the earlier approval: its tokens stop working and prompt=none asks again', async () => {
      const host = await startHost(adapter);
      const earlier = await host.tokens({ scope: 'openid offline_access' });
      expect((await host.userinfo(earlier.access_token)).status).toBe(200);

      const again = await host.authorize({ prompt: 'consent', scope: 'openid offline_access' }, ALICE);
      expect(callbackOf(await host.decide(again, 'deny')).get('error')).toBe('access_denied');

      expect((await host.userinfo(earlier.access_token)).status).toBe(401);
      expect((await host.refresh(earlier.refresh_token!)).body.error).toBe('invalid_grant');
      expect(callbackOf(await host.authorize({ prompt: 'none', scope: 'openid offline_access' }, ALICE)).get('error')).toBe('consent_required');
    });

    it('RFC 6749 4.1.2.1: Deny by a user who never approved the application ends nobody else\'s grant', async () => {
      const host = await startHost(adapter);
      const alices = await host.tokens({ scope: 'openid' });
      const bobsPage = await host.authorize({ scope: 'openid' }, { user: 'bob' });
      expect(callbackOf(await host.decide(bobsPage, 'deny', { user: 'bob' })).get('error')).toBe('access_denied');
      expect((await host.userinfo(alices.access_token)).status).toBe(200);
    });
  });

  describe('one decision per consent page (RFC 6749 10.12)', () => {
    it('RFC 6749 10.12: an Approve form posted three times issues one code; the replays get an error page', async () => {
      const host = await startHost(adapter);
      const page = await host.authorize({}, ALICE);
      expect(callbackOf(await host.decide(page, 'approve')).get('code')).toBeTruthy();
      expectErrorPage(await host.decide(page, 'approve'));
      expectErrorPage(await host.decide(page, 'approve'));
    });

    it('RFC 6749 10.12: after Deny, the same transaction posted with Approve issues no code', async () => {
      const host = await startHost(adapter);
      const page = await host.authorize({}, ALICE);
      expect(callbackOf(await host.decide(page, 'deny')).get('error')).toBe('access_denied');
      expectErrorPage(await host.decide(page, 'approve'));
      expect((await host.authorize({}, ALICE)).status, 'nothing was remembered').toBe(200);
    });

    it('RFC 6749 10.12: a transaction refused for another user stays usable by its own user', async () => {
      const host = await startHost(adapter);
      const page = await host.authorize({}, ALICE);
      expectErrorPage(await host.decide(page, 'approve', BOB), 403);
      expect(callbackOf(await host.decide(page, 'approve')).get('code')).toBeTruthy();
    });
  });

  describe('redirects after the form (RFC 9700 4.12)', () => {
    it('RFC 9700 4.12: Approve and Deny answer with 303 See Other, so the browser does not re-post the form', async () => {
      const host = await startHost(adapter);
      const approved = await host.decide(await host.authorize({}, ALICE), 'approve');
      expect(approved.status).toBe(303);
      expect(callbackOf(approved).get('code')).toBeTruthy();
      const denied = await host.decide(await host.authorize({ prompt: 'consent' }, ALICE), 'deny');
      expect(denied.status).toBe(303);
      expect(callbackOf(denied).get('error')).toBe('access_denied');
    });

    it('RFC 9700 4.12: an authorization request sent as a POST form is answered with 303, a GET with 302', async () => {
      const host = await startHost(adapter);
      await host.code({ scope: 'openid' });
      const viaPost = await host.postForm('/oauth/authorize', authorizeQuery({ scope: 'openid' }), {}, ALICE);
      expect(viaPost.status).toBe(303);
      expect(callbackOf(viaPost).get('code')).toBeTruthy();
      const viaGet = await host.authorize({ scope: 'openid' }, ALICE);
      expect(viaGet.status).toBe(302);
      expect(callbackOf(viaGet).get('code')).toBeTruthy();
    });
  });

  describe('remembered consent (per user, client and scope set)', () => {
    it('OIDC Core 3.1.2.4: the same scope set (or a part of it) skips the page', async () => {
      const host = await startHost(adapter);
      await host.code({ scope: 'openid profile email' });
      expect(callbackOf(await host.authorize({ scope: 'openid profile email' }, ALICE)).get('code')).toBeTruthy();
      expect(callbackOf(await host.authorize({ scope: 'email openid' }, ALICE)).get('code')).toBeTruthy();
    });

    it('OIDC Core 3.1.2.4: a larger scope set shows the page again', async () => {
      const host = await startHost(adapter);
      await host.code({ scope: 'openid profile' });
      const res = await host.authorize({ scope: 'openid profile email' }, ALICE);
      expect(res.status).toBe(200);
      expect(res.text).toContain('email address');
    });

    it('OIDC Core 3.1.2.1 prompt=consent: the page is shown even when consent was remembered', async () => {
      const host = await startHost(adapter);
      await host.code({});
      const res = await host.authorize({ prompt: 'consent' }, ALICE);
      expect(res.status).toBe(200);
      expect(res.text).toContain('name="transaction"');
    });

    it('OIDC Core 3.1.2.4: consent belongs to one user and one client', async () => {
      const host = await startHost(adapter);
      await host.code({});
      expect((await host.authorize({}, BOB)).status).toBe(200);
      expect((await host.authorize({ client_id: OTHER.id, redirect_uri: OTHER.redirectUri }, ALICE)).status).toBe(200);
    });
  });

  describe('offline_access (OIDC Core 11)', () => {
    it('OIDC Core 11: a refresh_token is issued when offline_access was requested and approved', async () => {
      const host = await startHost(adapter);
      const page = await host.authorize({ scope: 'openid offline_access' }, ALICE);
      expect(page.text).toContain('Keep access while you are away');
      const code = callbackOf(await host.decide(page, 'approve')).get('code')!;
      const res = await host.exchange(code);
      expect(res.status).toBe(200);
      expect(res.body.refresh_token).toEqual(expect.any(String));
      expect(res.body.scope.split(' ').sort()).toEqual(['offline_access', 'openid']);
    });

    it('OIDC Core 11 / RFC 6749 4.1.4: no refresh_token without offline_access, even once offline_access consent is remembered', async () => {
      const host = await startHost(adapter);
      const withoutOffline = await host.tokens({ scope: 'openid profile' });
      expect(withoutOffline.refresh_token).toBeUndefined();

      await host.tokens({ scope: 'openid profile offline_access' });
      const res = await host.exchange(callbackOf(await host.authorize({ scope: 'openid profile' }, ALICE)).get('code')!);
      expect(res.status).toBe(200);
      expect(res.body.refresh_token).toBeUndefined();
    });

    it('OIDC Core 11: offline_access on top of a remembered consent is asked for on the page, not granted silently', async () => {
      const host = await startHost(adapter);
      await host.code({ scope: 'openid profile' });
      const page = await host.authorize({ scope: 'openid profile offline_access' }, ALICE);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Keep access while you are away');

      const silent = callbackOf(await host.authorize({ scope: 'openid profile offline_access', prompt: 'none' }, ALICE));
      expect(silent.get('error')).toBe('consent_required');
    });

    it('OIDC Core 11: offline_access denied on the page issues nothing', async () => {
      const host = await startHost(adapter);
      const page = await host.authorize({ scope: 'openid offline_access' }, ALICE);
      const callback = callbackOf(await host.decide(page, 'deny'));
      expect(callback.get('error')).toBe('access_denied');
      expect(callback.get('code')).toBeNull();
    });
  });
});

describe('RFC 6749 5.2 (error_description)', () => {
  it('RFC 6749 5.2: every error_description returned in this file uses only %x20-21 / %x23-5B / %x5D-7E', () => {
    const seen = errorDescriptionsSeen();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((d) => !RFC6749_DESCRIPTION.test(d))).toEqual([]);
  });
});
