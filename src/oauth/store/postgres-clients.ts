/**
 * The PostgreSQL OAuth store's clients (docs/stores.md): one row each in `oauth_clients`, read
 * back through storedClientRecord, so a row that is not a client's is no client; a deletion takes
 * the client's grants and consents a chunk at a time and its row last.
 */
import { PG_CHUNK_ROWS } from '../../core/store-clients.js';
import { roundTripAnswered, type StoreCall } from '../../core/store-guard.js';
import { checkClientRecord, storedClientRecord } from '../client-record.js';
import type { statements } from './postgres-sql.js';
import type { OAuthClientRecord, OAuthStore } from './types.js';

type Query = <T>(text: string, values: unknown[]) => Promise<{ rows: T[]; rowCount: number | null }>;

interface ClientRow {
  id: string;
  record: unknown;
}

export function postgresClients(query: Query, sql: ReturnType<typeof statements>): Pick<OAuthStore, 'getClient' | 'saveClient' | 'listClients' | 'deleteClient'> {
  return {
    async getClient(clientId) {
      const { rows } = await query<ClientRow>(sql.getClient, [clientId]);
      const row = rows[0];
      return row && storedClientRecord(row.record, clientId);
    },

    async saveClient(client) {
      const record = checkClientRecord(client);
      await query(sql.saveClient, [record.id, JSON.stringify(record)]);
    },

    async listClients(page = {}) {
      // A record that is not a client's is left out (storedClientRecord), and the page filled from the clients after it.
      const records: OAuthClientRecord[] = [];
      let after = page.after ?? null;
      for (;;) {
        const wanted = page.limit === undefined ? null : page.limit - records.length;
        const { rows } = await query<ClientRow>(sql.listClients, [after, page.status ?? null, wanted]);
        for (const row of rows) {
          const record = storedClientRecord(row.record, row.id);
          if (record) records.push(record);
        }
        if (wanted === null || rows.length < wanted || records.length === page.limit) return records;
        after = rows.at(-1)!.id;
      }
    },

    async deleteClient(clientId, call?: StoreCall) {
      // Its grants and consents a chunk at a time, each round trip told to `call`: a client of a
      // million users takes seconds to delete, which in one statement would look like a silent
      // store (docs/stores.md#deadlines-and-outages). Until a chunk finds none: one that another
      // statement was deleting at the same time comes back short with rows still to go. The
      // record last, so that a deletion that fails part way leaves the client to delete again.
      for (const statement of [sql.deleteClientGrants, sql.deleteClientConsents]) {
        while (((await query(statement, [clientId, PG_CHUNK_ROWS])).rowCount ?? 0) > 0) roundTripAnswered(call);
      }
      const { rowCount } = await query(sql.deleteClient, [clientId]);
      return (rowCount ?? 0) > 0;
    },
  };
}
