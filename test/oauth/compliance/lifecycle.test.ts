/**
 * A grant's end from the host's side and the token life events it can follow: platform.revokeGrants
 * (RFC 7009 2.1 semantics for every grant of a user at a client) and the onEvent hook.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthEvent } from '../../../src/oauth/events.js';
import { ADAPTER_NAMES, closeHosts, CONFIDENTIAL, SERVICE, startHost, transactionOf } from './helpers.js';

afterEach(closeHosts);

const SCOPE = 'openid offline_access';

describe.each(ADAPTER_NAMES)('grant life on %s', (adapter) => {
  it('RFC 7009 2.1: platform.revokeGrants ends every token of the user at the client and forgets the consent', async () => {
    const host = await startHost(adapter);
    const tokens = await host.tokens({ scope: SCOPE });
    // Consent remembered: the second authorization goes straight back to the client.
    expect((await host.authorize({ scope: SCOPE }, { user: 'alice' })).status).toBe(302);

    await host.platform.revokeGrants({ sub: 'user-alice', clientId: CONFIDENTIAL.id });
    expect((await host.userinfo(tokens.access_token)).status).toBe(401);
    expect((await host.refresh(tokens.refresh_token!)).body.error).toBe('invalid_grant');
    transactionOf(await host.authorize({ scope: SCOPE }, { user: 'alice' }));
    await expect(host.platform.revokeGrants({ sub: '', clientId: CONFIDENTIAL.id })).rejects.toThrow(expect.objectContaining({ code: 'invalid_argument', field: 'sub' }));
  });

  it('RFC 6749 6 / OAuth 2.0 Security BCP 4.14: onEvent hears issuance, refresh, revocation and reuse, without tokens or secrets; a throwing hook breaks nothing', async () => {
    const events: OAuthEvent[] = [];
    const host = await startHost(adapter, {
      platform: {
        onEvent: (event) => {
          events.push(event as OAuthEvent);
          throw new Error('the host hook failed');
        },
      },
    });
    const first = await host.tokens({ scope: SCOPE });
    const second = (await host.refresh(first.refresh_token!)).body as { access_token: string; refresh_token: string };
    expect(second.access_token).toBeTruthy();
    await host.refresh(first.refresh_token!);
    const service = await host.token({ grant_type: 'client_credentials' }, { basic: SERVICE });
    expect(service.status).toBe(200);
    const again = await host.tokens({ scope: SCOPE });
    await host.revoke({ token: again.access_token });
    await host.revoke({ token: again.refresh_token! });
    await host.platform.revokeGrants({ sub: 'user-alice', clientId: CONFIDENTIAL.id });

    expect(events.map(({ at: _at, ...event }) => event)).toEqual([
      { type: 'token.issued', clientId: CONFIDENTIAL.id, sub: 'user-alice', grantType: 'authorization_code' },
      { type: 'token.refreshed', clientId: CONFIDENTIAL.id, sub: 'user-alice', grantType: 'refresh_token' },
      { type: 'refresh_token.reused', clientId: CONFIDENTIAL.id, sub: 'user-alice' },
      { type: 'token.issued', clientId: SERVICE.id, grantType: 'client_credentials' },
      { type: 'token.issued', clientId: CONFIDENTIAL.id, sub: 'user-alice', grantType: 'authorization_code' },
      { type: 'token.revoked', clientId: CONFIDENTIAL.id, sub: 'user-alice' },
      { type: 'grant.revoked', clientId: CONFIDENTIAL.id, sub: 'user-alice' },
      { type: 'grant.revoked', clientId: CONFIDENTIAL.id, sub: 'user-alice' },
    ]);
    expect(events.every((event) => event.at === host.clock.now())).toBe(true);
    const text = JSON.stringify(events);
    for (const secret of [first.access_token, first.refresh_token!, second.access_token, service.body.access_token, CONFIDENTIAL.secret, SERVICE.secret]) {
      expect(text).not.toContain(secret);
    }
  });
});
