/**
 * `{admin}/clients`: applications registered at run time, in the OAuth store every process
 * shares (docs/operator.md). Clients from `oauth.clients` are listed but read-only: the options
 * are where they change.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ok } from '../core/envelope.js';
import { ConfigurationError, ConflictError, NotFoundError, ValidationError } from '../core/errors.js';
import { jsonResponse } from '../core/http.js';
import type { Logger } from '../core/logger.js';
import { readBody } from '../core/body.js';
import { parseWith } from '../core/validation.js';
import { checkClientRecord, DEFAULT_CLIENT_GRANTS, DEFAULT_CLIENT_SCOPES, grants, redirectUris, scopes } from '../oauth/client-record.js';
import { hashClientSecret } from '../oauth/client-secret.js';
import type { OAuthClientAdmin } from '../oauth/setup.js';
import type { OAuthClientRecord } from '../oauth/store/types.js';
import type { AdminAccessCheck } from './access.js';
import { adminRoute } from './route.js';

const registration = z.strictObject({
  name: z.string().min(1).max(200),
  redirectUris,
  scopes: scopes.optional(),
  grants: grants.optional(),
  public: z.boolean().optional(),
  introspect: z.boolean().optional(),
});

const change = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  redirectUris: redirectUris.optional(),
  scopes: scopes.optional(),
  grants: grants.optional(),
  status: z.enum(['active', 'suspended']).optional(),
});

export interface ClientsDeps {
  logger: Logger;
  bodyLimit: number;
  now: () => number;
  secretOverlapSeconds: number;
  clients: OAuthClientAdmin;
}

/** What the API shows of a client: never a secret or its hash. */
function view(client: OAuthClientRecord, configured: ReadonlySet<string>) {
  return {
    id: client.id,
    name: client.name,
    redirectUris: client.redirectUris,
    scopes: client.scopes,
    grants: client.grants,
    public: client.secretHash === undefined,
    introspect: client.introspect === true,
    status: client.status ?? 'active',
    source: configured.has(client.id) ? 'options' : 'store',
    ...(client.previousSecretValidUntil !== undefined ? { previousSecretValidUntil: new Date(client.previousSecretValidUntil).toISOString() } : {}),
  };
}

/** A record the stores would refuse is a 400 naming the field, not a 500. */
function checked(record: OAuthClientRecord): OAuthClientRecord {
  try {
    return checkClientRecord(record);
  } catch (error) {
    if (error instanceof ConfigurationError) throw new ValidationError(error.issues);
    throw error;
  }
}

const newSecret = () => randomBytes(32).toString('base64url');

export function clientRoutes(basePath: string, access: AdminAccessCheck, deps: ClientsDeps) {
  const { store, configuredIds } = deps.clients;
  const body = async (request: Parameters<typeof readBody>[0]) => readBody(request, { accept: ['json'], limit: deps.bodyLimit });
  const existing = async (id: string) => {
    const client = await store.getClient(id);
    if (!client) throw new NotFoundError(`No client ${JSON.stringify(id)}`);
    return client;
  };
  const writable = async (id: string) => {
    if (configuredIds.has(id)) throw new ConflictError(`Client ${JSON.stringify(id)} comes from the options (oauth.clients); change it there`);
    return existing(id);
  };
  const saved = async (client: OAuthClientRecord, what: string) => {
    await store.saveClient(client);
    deps.clients.changed(client.id);
    deps.logger.info({ clientId: client.id, change: what }, 'admin: client changed');
  };

  return [
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/clients',
      doc: { operationId: 'admin_list_clients', summary: 'Every client, configured and registered', responses: { 200: { description: 'The clients' } } },
      async handle() {
        const clients = await store.listClients();
        return ok(clients.map((client) => view(client, configuredIds)).sort((a, b) => a.id.localeCompare(b.id)));
      },
    }),
    adminRoute(basePath, access, {
      method: 'POST',
      path: '/clients',
      doc: {
        operationId: 'admin_register_client',
        summary: 'Register an application; its secret is shown this once',
        body: { contentType: 'application/json', schema: registration, example: { name: 'Shop backend', redirectUris: ['https://shop.example/callback'] } },
        responses: { 201: { description: 'Registered: the client and its secret' }, 400: { description: 'A field is invalid' } },
      },
      async handle(request) {
        const input = parseWith(registration, await body(request));
        const secret = input.public ? undefined : newSecret();
        const client = checked({
          id: `app_${randomBytes(12).toString('base64url')}`,
          name: input.name,
          ...(secret === undefined ? {} : { secretHash: await hashClientSecret(secret) }),
          redirectUris: input.redirectUris,
          scopes: input.scopes ?? [...DEFAULT_CLIENT_SCOPES],
          grants: input.grants ?? [...DEFAULT_CLIENT_GRANTS],
          ...(input.introspect ? { introspect: true } : {}),
        });
        await saved(client, 'registered');
        return jsonResponse(201, { code: 0, message: 'ok', data: { client: view(client, configuredIds), client_secret: secret ?? null } }, { 'cache-control': 'no-store' });
      },
    }),
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/clients/:id',
      doc: { operationId: 'admin_get_client', summary: 'One client', responses: { 200: { description: 'The client' }, 404: { description: 'No such client' } } },
      async handle(_request, { id }) {
        return ok(view(await existing(id!), configuredIds));
      },
    }),
    adminRoute(basePath, access, {
      method: 'PATCH',
      path: '/clients/:id',
      doc: {
        operationId: 'admin_change_client',
        summary: 'Change a registered client, or suspend and resume it',
        body: { contentType: 'application/json', schema: change, example: { status: 'suspended' } },
        responses: { 200: { description: 'The changed client' }, 404: { description: 'No such client' }, 409: { description: 'A configured client' } },
      },
      async handle(request, { id }) {
        const input = parseWith(change, await body(request));
        const before = await writable(id!);
        // Resumed: what was issued before, or during the suspension, stays dead (docs/operator.md#applications).
        const resumed = before.status === 'suspended' && input.status === 'active' ? { tokensValidAfter: deps.now() } : {};
        const client = checked({ ...before, ...input, ...resumed });
        await saved(client, Object.keys(input).join(',') || 'nothing');
        return ok(view(client, configuredIds));
      },
    }),
    adminRoute(basePath, access, {
      method: 'POST',
      path: '/clients/:id/secret',
      doc: {
        operationId: 'admin_rotate_client_secret',
        summary: 'A new secret; the previous one keeps working until previous_valid_until',
        responses: { 200: { description: 'The new secret, shown this once' }, 404: { description: 'No such client' }, 409: { description: 'A configured client' } },
      },
      async handle(_request, { id }) {
        const client = await writable(id!);
        if (!client.secretHash) throw new ValidationError([{ field: 'id', rule: 'custom', message: 'is a public client, which has no secret' }]);
        const secret = newSecret();
        const validUntil = deps.now() + deps.secretOverlapSeconds * 1000;
        await saved(
          { ...client, secretHash: await hashClientSecret(secret), previousSecretHash: client.secretHash, previousSecretValidUntil: validUntil },
          'secret rotated',
        );
        return jsonResponse(200, { code: 0, message: 'ok', data: { client_secret: secret, previous_valid_until: new Date(validUntil).toISOString() } }, { 'cache-control': 'no-store' });
      },
    }),
    adminRoute(basePath, access, {
      method: 'DELETE',
      path: '/clients/:id',
      doc: {
        operationId: 'admin_delete_client',
        summary: 'Delete a registered client; its tokens stop working',
        responses: { 200: { description: 'Deleted' }, 404: { description: 'No such client' }, 409: { description: 'A configured client' } },
      },
      async handle(_request, { id }) {
        await writable(id!);
        await store.deleteClient(id!);
        deps.clients.changed(id!);
        deps.logger.info({ clientId: id }, 'admin: client deleted');
        return ok({ id, deleted: true });
      },
    }),
  ];
}
