/**
 * One page of clients in id order (types.ts, `listClients`), cut from records at hand: the memory
 * and Redis stores hold every client anyway, and the admin API cuts what a store of the host's
 * own answers in full. Ids are printable ASCII, so `<` on strings is byte order, the order
 * PostgreSQL's `COLLATE "C"` gives.
 */
import type { ClientPage, OAuthClientRecord } from './types.js';

export const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function clientPage(records: Iterable<OAuthClientRecord>, page: ClientPage = {}): OAuthClientRecord[] {
  const { after, limit, status } = page;
  const chosen = [...records].filter((client) => (after === undefined || client.id > after) && (status === undefined || (client.status ?? 'active') === status));
  chosen.sort(byId);
  return limit === undefined ? chosen : chosen.slice(0, limit);
}
