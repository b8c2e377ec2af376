/**
 * OAuthStore conformance. Clients: saved, listed in byte order, deleted with their grants and
 * consents, and records authorize or token could not use refused.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.js';
import type { OAuthClientRecord, OAuthStore } from '../../../src/oauth/store/types.js';
import { accessView, BASE_TIME, clientRecord, type ConformanceSuite, fresh, issueGrant } from './fixtures.js';

export function describeClientConformance(suite: ConformanceSuite): void {
  let store: OAuthStore;
  beforeAll(() => {
    ({ store } = suite);
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
}
