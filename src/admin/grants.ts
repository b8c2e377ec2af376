/** `DELETE {admin}/grants`: a user's grants for an application end, and the consent is forgotten. */
import { z } from 'zod';
import { ok } from '../core/envelope.js';
import type { Logger } from '../core/logger.js';
import type { AdminAccessCheck } from './access.js';
import { adminRoute, parseQuery, queryId } from './route.js';

const grantsQuery = z.strictObject({ client_id: queryId, sub: queryId });

export interface GrantsDeps {
  logger: Logger;
  /** How many live grants ended; undefined from a store of the host's own that does not tell. */
  revokeGrants(grants: { sub: string; clientId: string }): Promise<number | undefined>;
}

export function grantRoutes(basePath: string, access: AdminAccessCheck, deps: GrantsDeps) {
  return [
    adminRoute(basePath, access, {
      method: 'DELETE',
      path: '/grants',
      doc: {
        operationId: 'admin_revoke_grants',
        summary: "Revoke a user's grants for an application and forget the consent",
        query: grantsQuery,
        responses: { 200: { description: '`{ client_id, sub, revoked }`: how many live grants ended (0 when there was none; null from a store that cannot tell)' } },
      },
      async handle(request) {
        const { client_id: clientId, sub } = parseQuery(request, grantsQuery);
        const revoked = (await deps.revokeGrants({ sub, clientId })) ?? null;
        deps.logger.info({ clientId, sub, revoked }, 'admin: grants revoked and consent forgotten');
        return ok({ client_id: clientId, sub, revoked });
      },
    }),
  ];
}
