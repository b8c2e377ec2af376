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
import { CONTROL_CHARACTERS_PROBLEM, NO_CONTROL_CHARACTERS } from '../core/control-characters.js';
import { checkClientRecord, DEFAULT_CLIENT_GRANTS, DEFAULT_CLIENT_SCOPES, grants, redirectUris, scopes } from '../oauth/client-record.js';
import { hashClientSecret } from '../oauth/client-secret.js';
import type { OAuthClientAdmin } from '../oauth/setup.js';
import type { OAuthClientRecord } from '../oauth/store/types.js';
import type { AdminAccessCheck } from './access.js';
import { DEFAULT_CLIENT_PAGE, listClients, listQuery, listResponseSchema, MAX_CLIENT_PAGE } from './client-list.js';
import { adminRoute, parseQuery } from './route.js';

const registration = z.strictObject({
  name: z.string().min(1).max(200).regex(NO_CONTROL_CHARACTERS, CONTROL_CHARACTERS_PROBLEM),
  redirectUris,
  scopes: scopes.optional(),
  grants: grants.optional(),
  public: z.boolean().optional(),
  introspect: z.boolean().optional(),
});

const change = z.strictObject({
  name: z.string().min(1).max(200).regex(NO_CONTROL_CHARACTERS, CONTROL_CHARACTERS_PROBLEM).optional(),
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
  /** Deletes an application's stored quota rules, answering how many; absent while the quota keeps none of its rules. */
  removeRules?: (clientId: string) => Promise<number>;
}

const rotateQuery = z.strictObject({ force: z.enum(['true', 'false']).optional() });

/** While the secret rotated out before still works (ms since the epoch), or undefined. */
const previousUntil = (client: OAuthClientRecord, at: number) =>
  client.previousSecretHash !== undefined && client.previousSecretValidUntil !== undefined && client.previousSecretValidUntil > at ? client.previousSecretValidUntil : undefined;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * What the API shows of a client: never a secret or its hash. The fields are the registration
 * body's (camelCase, like `redirectUris`); `previous_valid_until` is spelled as the rotation
 * answers it, null when no rotated-out secret works.
 */
function view(client: OAuthClientRecord, configured: ReadonlySet<string>, at: number) {
  const until = previousUntil(client, at);
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
    previous_valid_until: until === undefined ? null : iso(until),
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
  const notConfigured = (id: string) => {
    if (configuredIds.has(id)) throw new ConflictError(`Client ${JSON.stringify(id)} comes from the options (oauth.clients); change it there`);
  };
  const writable = async (id: string) => {
    notConfigured(id);
    return existing(id);
  };
  const show = (client: OAuthClientRecord) => view(client, configuredIds, deps.now());
  const saved = async (client: OAuthClientRecord, what: string) => {
    await store.saveClient(client);
    deps.clients.changed(client.id);
    deps.logger.info({ clientId: client.id, change: what }, 'admin: client changed');
  };

  return [
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/clients',
      doc: {
        operationId: 'admin_list_clients',
        summary: 'The clients, configured and registered, one page at a time in id order',
        query: listQuery,
        responses: { 200: { description: `A page of clients and \`next_cursor\` (null on the last page); ${DEFAULT_CLIENT_PAGE} a page unless \`limit\` says (at most ${MAX_CLIENT_PAGE})`, schema: listResponseSchema } },
      },
      async handle(request) {
        return listClients(store, parseQuery(request, listQuery), show);
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
        return jsonResponse(201, { code: 0, message: 'ok', data: { client: show(client), client_secret: secret ?? null } });
      },
    }),
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/clients/:id',
      doc: { operationId: 'admin_get_client', summary: 'One client', responses: { 200: { description: 'The client' }, 404: { description: 'No such client' } } },
      async handle(_request, { id }) {
        return ok(show(await existing(id!)));
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
        return ok(show(client));
      },
    }),
    adminRoute(basePath, access, {
      method: 'POST',
      path: '/clients/:id/secret',
      doc: {
        operationId: 'admin_rotate_client_secret',
        summary: 'A new secret; the previous one keeps working until previous_valid_until',
        query: rotateQuery,
        responses: {
          200: { description: 'The new secret, shown this once; `older_secret_ended` says whether `force=true` ended a secret rotated out before' },
          404: { description: 'No such client' },
          409: { description: 'A configured client, or a secret rotated out before still works (rotate after its previous_valid_until, or with force=true)' },
        },
      },
      async handle(request, { id }) {
        const { force } = parseQuery(request, rotateQuery);
        const client = await writable(id!);
        if (!client.secretHash) throw new ValidationError([{ field: 'id', rule: 'custom', message: 'is a public client, which has no secret' }]);
        // One secret overlaps the current one at most: a rotation would end the older at once,
        // cutting off whoever still uses it before the time the earlier answer promised.
        const at = deps.now();
        const older = previousUntil(client, at);
        if (older !== undefined && force !== 'true') {
          throw new ConflictError(`The secret rotated out before works until ${iso(older)}: rotate again after then, or with force=true to end it now`);
        }
        const secret = newSecret();
        const validUntil = at + deps.secretOverlapSeconds * 1000;
        await saved(
          { ...client, secretHash: await hashClientSecret(secret), previousSecretHash: client.secretHash, previousSecretValidUntil: validUntil },
          older === undefined ? 'secret rotated' : 'secret rotated, the older one ended',
        );
        const data = { client_secret: secret, previous_valid_until: iso(validUntil), older_secret_ended: older !== undefined };
        return jsonResponse(200, { code: 0, message: 'ok', data });
      },
    }),
    adminRoute(basePath, access, {
      method: 'DELETE',
      path: '/clients/:id',
      doc: {
        operationId: 'admin_delete_client',
        summary: 'Delete a registered client; its tokens stop working',
        responses: { 200: { description: '`{ id, deleted, rules_deleted }`: how many stored quota rules went with it' }, 404: { description: 'No such client' }, 409: { description: 'A configured client' } },
      },
      async handle(_request, { id }) {
        notConfigured(id!);
        // Suspended first, so its tokens stop working at once; then the rules, the grants and
        // consents, and the record last: should the deletion fail part way, a retry finds the
        // client and finishes (docs/operator.md#applications). A record the store holds but
        // cannot read is no client, and is deleted all the same.
        const client = await store.getClient(id!);
        if (client && client.status !== 'suspended') await saved({ ...client, status: 'suspended' }, 'status (deleting)');
        const rules = (await deps.removeRules?.(id!)) ?? 0;
        if (!(await store.deleteClient(id!)) && !client) throw new NotFoundError(`No client ${JSON.stringify(id)}`);
        deps.clients.changed(id!);
        deps.logger.info({ clientId: id, rulesDeleted: rules }, 'admin: client deleted');
        return ok({ id, deleted: true, rules_deleted: rules });
      },
    }),
  ];
}
