/**
 * Clients from `oauth.clients` are answered from each process's own options and never written to
 * the store: processes sharing a store with different lists (another redirect URI per
 * environment, say) do not overwrite each other, and a configured id wins over a stored record
 * of the same id (docs/oauth.md#clients). Clients registered through the admin API live in the
 * store.
 */
import { clientPage } from './store/client-page.js';
import type { OAuthClientRecord, OAuthStore } from './store/types.js';

/**
 * The store with the configured clients in front: `records` resolves once their secrets are
 * hashed (part of the server's start); their ids are known at once, so the synchronous status
 * of an in-process store stays synchronous.
 */
export function withConfiguredClients(store: OAuthStore, ids: ReadonlySet<string>, records: () => Promise<readonly OAuthClientRecord[]>): OAuthStore {
  const configured = async (clientId: string) => (await records()).find((client) => client.id === clientId);
  const overrides: Partial<OAuthStore> = {
    getClient: async (clientId) => (ids.has(clientId) ? structuredClone(await configured(clientId)) : store.getClient(clientId)),
    // A page of both, in id order; the store is asked for as many more as a configured id may hide.
    listClients: async (page) => {
      const wanted = page?.limit === undefined ? page : { ...page, limit: page.limit + ids.size };
      const stored = (await store.listClients(wanted)).filter((client) => !ids.has(client.id));
      return clientPage([...structuredClone(await records()), ...stored], page);
    },
    // The admin API refuses to change a configured client before it gets here (409).
    saveClient: async (client) => {
      if (ids.has(client.id)) throw new TypeError(`client ${client.id} comes from the options (oauth.clients)`);
      await store.saveClient(client);
    },
    deleteClient: async (clientId) => (ids.has(clientId) ? false : store.deleteClient(clientId)),
  };
  if (store.clientStatusSync) {
    const statusOf = store.clientStatusSync.bind(store);
    overrides.clientStatusSync = (clientId) => (ids.has(clientId) ? 'active' : statusOf(clientId));
  }
  return new Proxy(store, {
    get: (target, key, receiver) => (Object.hasOwn(overrides, key) ? overrides[key as keyof OAuthStore] : Reflect.get(target, key, receiver)),
  });
}
