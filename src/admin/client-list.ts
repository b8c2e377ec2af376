/**
 * `GET {admin}/clients`: the applications one page at a time, in id order, optionally of one
 * status (docs/operator.md#listing-applications). `data` stays the array of clients; the cursor of
 * the next page goes beside it, as get_quota's `time` does.
 */
import { z } from 'zod';
import { okEnvelopeSchema } from '../core/envelope.js';
import { ValidationError } from '../core/errors.js';
import { jsonResponse, type PlatformResponse } from '../core/http.js';
import { clientPage } from '../oauth/store/client-page.js';
import type { OAuthClientRecord, OAuthStore } from '../oauth/store/types.js';

export const DEFAULT_CLIENT_PAGE = 100;
export const MAX_CLIENT_PAGE = 500;

export const listQuery = z.strictObject({
  status: z.enum(['active', 'suspended']).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_CLIENT_PAGE).default(DEFAULT_CLIENT_PAGE),
  cursor: z.string().min(1).optional(),
});

export const listResponseSchema = okEnvelopeSchema(z.array(z.looseObject({ id: z.string() }))).extend({
  next_cursor: z.string().nullable(),
});

/** The cursor names the last client shown; it is opaque to callers, so its form may change. */
const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** The id a cursor names; anything that is not a cursor's exact spelling is a 400. */
function afterOf(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (id === '' || cursorOf(id) !== cursor) {
    throw new ValidationError([{ field: 'cursor', rule: 'cursor', message: 'is not a next_cursor this API gave' }]);
  }
  return id;
}

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
  return jsonResponse(200, { code: 0, message: 'ok', data: shown.map(view), next_cursor: next });
}
