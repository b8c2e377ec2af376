/**
 * The OAuth store as each part of the server sees it, composed here and nowhere else. Each layer
 * wraps the one before it:
 *
 * 1. guarded (guarded-store.ts): every call gets the store's deadline, outage log and local
 *    queue. It is innermost so that every call that leaves the process is guarded, whichever
 *    layer makes it.
 * 2. configured clients (configured-clients.ts): the ids of `oauth.clients` are answered from the
 *    options and never reach the store.
 * 3. client status (client-status-gate.ts): a suspended or deleted client, and the codes and
 *    tokens it may no longer serve, stop here. It is outermost because it judges configured and
 *    stored clients alike, and reads both through layer 2.
 *
 * The start check reaches the store through layer 1, the admin API manages clients through
 * layer 2 (it must see suspended ones), and the endpoints read through layer 3.
 */
import type { Clock } from '../core/clock.js';
import type { StoreGuard } from '../core/store-guard.js';
import { gateByClientStatus } from './client-status-gate.js';
import { clientStatusCache, type ClientStatus } from './client-status.js';
import { withConfiguredClients } from './configured-clients.js';
import type { ResolvedLifetimes } from './context.js';
import { guardedStore } from './guarded-store.js';
import type { OAuthClientRecord, OAuthStore } from './store/types.js';

export interface OAuthStoreLayers {
  guarded: OAuthStore;
  /** Configured clients in front of the guarded store; suspended clients included. */
  clients: OAuthStore;
  /** What the endpoints read: clients that may act, codes and tokens as their clients let them be served. */
  endpoints: OAuthStore;
  /** The client records layer 3 judges by, read through layer 2. */
  status: ClientStatus;
}

export interface OAuthStoreParts {
  guard: StoreGuard;
  configured: {
    ids: ReadonlySet<string>;
    /** Their records, once their secrets are hashed. */
    records: () => Promise<readonly OAuthClientRecord[]>;
    /** Their records but their secrets, known at once: what their tokens are served as. */
    pinned: ReadonlyMap<string, OAuthClientRecord>;
  };
  now: Clock;
  lifetimes: ResolvedLifetimes;
}

export function composeOAuthStore(raw: OAuthStore, { guard, configured, now, lifetimes }: OAuthStoreParts): OAuthStoreLayers {
  const guarded = guardedStore(raw, guard);
  const clients = withConfiguredClients(guarded, configured.ids, configured.records);
  const status = clientStatusCache((clientId) => clients.getClient(clientId), now, configured.pinned);
  const endpoints = gateByClientStatus(clients, status, lifetimes);
  return { guarded, clients, endpoints, status };
}
