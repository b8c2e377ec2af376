/**
 * `GET {admin}/clients`: the applications one page at a time, in id order, optionally of one
 * status (docs/operator.md#listing-applications). `data` stays the array of clients; the cursor of
 * the next page goes beside it, as get_quota's `time` does.
 */
import { z } from 'zod';
import type { PlatformResponse } from '../core/http.js';
import { clientPage } from '../oauth/store/client-page.js';
import type { OAuthClientRecord, OAuthStore } from '../oauth/store/types.js';
import { afterOf, cursorOf, pageCursor, pageLimit, pageResponse, pageResponseSchema } from './paging.js';

export const DEFAULT_CLIENT_PAGE = 100;
export const MAX_CLIENT_PAGE = 500;

export const listQuery = z.strictObject({
  status: z.enum(['active', 'suspended']).optional(),
  limit: pageLimit(DEFAULT_CLIENT_PAGE, MAX_CLIENT_PAGE),
  cursor: pageCursor,
});

export const listResponseSchema = pageResponseSchema(z.array(z.looseObject({ id: z.string() })));

export async function listClients(
  store: OAuthStore,
  query: z.output<typeof listQuery>,
  view: (client: OAuthClientRecord) => unknown,
): Promise<PlatformResponse> {
  // One more than shown tells whether a next page exists. The store pages if it can; a store of the
  // host's own may answer every client, which clientPage cuts the same way.
  const page = { limit: query.limit + 1, ...(query.status ? { status: query.status } : {}), ...(query.cursor === undefined ? {} : { after: afterOf(query.cursor) }) };
  const found = clientPage(await store.listClients(page), page);
  const shown = found.slice(0, query.limit);
  const next = found.length > query.limit ? cursorOf(shown.at(-1)!.id) : null;
  return pageResponse(shown.map(view), next);
}
