/**
 * Clients from `oauth.clients` are answered from each process's own options and never written to
 * the store: processes sharing a store with different lists (another redirect URI per
 * environment, say) do not overwrite each other, and a configured id wins over a stored record
 * of the same id (docs/oauth.md#clients). Clients registered through the admin API live in the
 * store.
 */
import { configurationError } from '../core/errors.js';
import { isClientId } from './client-record.js';
import { passThrough, type StoreLayer } from './store-layer.js';
import { clientPage } from './store/client-page.js';
import type { OAuthClientRecord, OAuthStore } from './store/types.js';

/**
 * The store with the configured clients in front: `records` resolves once their secrets are
 * hashed (part of the server's start); their ids are known at once, so the synchronous status
 * of an in-process store stays synchronous. An id no client can have (client-record.ts: printable
 * ASCII, at most 200 characters) is unknown without asking the store: it comes from a stranger's
 * request, and PostgreSQL refuses text with a NUL, so its error would answer the stranger 503 and
 * log an outage of a store that is fine. Every other call goes to `store` as it is.
 */
export function withConfiguredClients(store: OAuthStore, ids: ReadonlySet<string>, records: () => Promise<readonly OAuthClientRecord[]>): StoreLayer {
  const configured = async (clientId: string) => (await records()).find((client) => client.id === clientId);
  const clientStatusSync = store.clientStatusSync?.bind(store);
  return {
    ...passThrough(store),
    getClient: async (clientId) => {
      if (ids.has(clientId)) return structuredClone(await configured(clientId));
      return isClientId(clientId) ? store.getClient(clientId) : undefined;
    },
    // The admin API refuses to change a configured client before it gets here (409).
    saveClient: async (client) => {
      if (ids.has(client.id)) throw configurationError('invalid_client_record', 'id', `client ${client.id} comes from the options (oauth.clients)`);
      await store.saveClient(client);
    },
    // A page of both, in id order; the store is asked for as many more as a configured id may hide.
    listClients: async (page) => {
      const wanted = page?.limit === undefined ? page : { ...page, limit: page.limit + ids.size };
      const stored = (await store.listClients(wanted)).filter((client) => !ids.has(client.id));
      return clientPage([...structuredClone(await records()), ...stored], page);
    },
    deleteClient: async (clientId) => (ids.has(clientId) || !isClientId(clientId) ? false : store.deleteClient(clientId)),
    clientStatusSync: clientStatusSync && ((clientId) => (ids.has(clientId) ? 'active' : clientStatusSync(clientId))),
  };
}
