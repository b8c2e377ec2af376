/**
 * What a registered client must look like, checked in one place: for `oauth.clients` when the
 * platform is built, and for every `saveClient` of the memory, Redis and PostgreSQL stores. A
 * record that passes here is one the authorize and token endpoints can use.
 */
import { z } from 'zod';
import { CONTROL_CHARACTERS_PROBLEM, NO_CONTROL_CHARACTERS } from '../core/control-characters.js';
import { nonEmptyText } from '../core/option-schemas.js';
import { storedJson } from '../core/stored-json.js';
import { parseConfig } from '../core/validation.js';
import { SUPPORTED_SCOPES } from './claims.js';
import { secretHashProblem } from './client-secret.js';
import type { OAuthClientRecord } from './store/types.js';

export const DEFAULT_CLIENT_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
export const DEFAULT_CLIENT_GRANTS = ['authorization_code', 'refresh_token'] as const;

/** RFC 6749 3.1.2: absolute, no fragment. http(s) only: the consent page's form-action must be able to name its origin. */
function isRedirectUri(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hash === '' && !value.includes('#');
}

/** The hosts a redirect may reach over plain http: this machine (RFC 8252 7.3, as `URL` spells them). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * RFC 6749 3.1.2.1 wants TLS for a redirect that carries a code; plain http is left for a native
 * app's loopback listener (RFC 8252 7.3), which never leaves the machine.
 */
function isSecureOrLoopback(value: string): boolean {
  if (!URL.canParse(value)) return true; // isRedirectUri says what is wrong with it
  const url = new URL(value);
  return url.protocol !== 'http:' || LOOPBACK_HOSTS.has(url.hostname);
}

const MAX_CLIENT_ID_LENGTH = 200;
const PRINTABLE_ASCII = /^[\x20-\x7E]+$/;
const clientId = z.string().min(1).max(MAX_CLIENT_ID_LENGTH).regex(PRINTABLE_ASCII, 'must be printable ASCII');

/**
 * Whether `value` could be the id of a client: one that is not names no client in any store. The
 * schema's rules without its parse, on every token request.
 */
export const isClientId = (value: string): boolean => value.length <= MAX_CLIENT_ID_LENGTH && PRINTABLE_ASCII.test(value);
const secretHash = z.string().superRefine((value, ctx) => {
  const problem = secretHashProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
export const redirectUris = z
  .array(
    z
      .string()
      // A control character could not be sent back in a Location header, and no URL needs one.
      .regex(NO_CONTROL_CHARACTERS, CONTROL_CHARACTERS_PROBLEM)
      .refine(isRedirectUri, 'must be an absolute http(s) URL without a fragment (RFC 6749 3.1.2)')
      .refine(isSecureOrLoopback, { message: 'must be https: plain http is for 127.0.0.1, [::1] and localhost only (RFC 6749 3.1.2.1, RFC 8252 7.3)', params: { rule: 'https' } }),
  )
  .min(1);
export const scopes = z.array(z.enum(SUPPORTED_SCOPES)).min(1);
export const grants = z.array(z.enum([...DEFAULT_CLIENT_GRANTS, 'client_credentials'])).min(1);

/** RFC 6749 4.4: only a client that can authenticate may act on its own behalf. */
function clientCredentialsNeedSecret(client: { grants: string[]; secretHash?: string | undefined; secret?: string | undefined }, ctx: z.RefinementCtx): void {
  if (client.grants.includes('client_credentials') && client.secretHash === undefined && client.secret === undefined) {
    ctx.addIssue({ code: 'custom', message: 'has client_credentials, which needs a secret or secretHash', path: ['grants'] });
  }
}

/**
 * A configured client says which kind it is: a secret (or its hash) makes it confidential,
 * `public: true` makes it public (it proves itself with PKCE instead, docs/oauth.md#pkce).
 * Without this, `secretHash: process.env.X` with X unset would quietly make a public client.
 */
function secretOrPublic(client: { grants: string[]; secretHash?: string | undefined; secret?: string | undefined; public?: boolean | undefined }, ctx: z.RefinementCtx): void {
  const hasSecret = client.secretHash !== undefined || client.secret !== undefined;
  if (client.public === true) {
    if (hasSecret) ctx.addIssue({ code: 'custom', message: 'is true, but the client has a secret: a public client has none; remove one of the two', path: ['public'] });
    return;
  }
  if (hasSecret) return;
  const given = 'secretHash' in client || 'secret' in client ? 'is undefined (is the environment variable it reads set?)' : 'is required';
  ctx.addIssue({ code: 'custom', message: `${given}: give secretHash (or secret), or mark a client without a secret public: true`, path: ['secretHash'] });
}

/** A client as the stores keep it. */
/** OIDC Registration `id_token_signed_response_alg`: what an id_token may be signed with (a key of that algorithm must be configured). */
const idTokenSigningAlg = z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);

export const clientRecordSchema = z
  .strictObject({
    id: clientId,
    name: nonEmptyText,
    secretHash: secretHash.optional(),
    redirectUris,
    scopes,
    grants,
    introspect: z.boolean().optional(),
    idTokenSigningAlg: idTokenSigningAlg.optional(),
    status: z.enum(['active', 'suspended']).optional(),
    previousSecretHash: secretHash.optional(),
    previousSecretValidUntil: z.number().int().nonnegative().optional(),
    tokensValidAfter: z.number().int().nonnegative().optional(),
  })
  .superRefine(clientCredentialsNeedSecret);

/** A client as `oauth.clients` lists it: a plain `secret` (hashed at start) or a `secretHash`, and defaults. */
export const clientConfigSchema = z
  .strictObject({
    id: clientId,
    name: nonEmptyText.optional(),
    secretHash: secretHash.optional(),
    secret: z.string().min(8, 'must be at least 8 characters').optional(),
    redirectUris,
    scopes: scopes.default([...DEFAULT_CLIENT_SCOPES]),
    grants: grants.default([...DEFAULT_CLIENT_GRANTS]),
    public: z.boolean().optional(),
    introspect: z.boolean().optional(),
    idTokenSigningAlg: idTokenSigningAlg.optional(),
  })
  .superRefine(secretOrPublic)
  .superRefine(clientCredentialsNeedSecret)
  .refine((client) => client.secret === undefined || client.secretHash === undefined, {
    message: 'give secret or secretHash, not both',
    path: ['secret'],
  });

export type ClientConfig = z.output<typeof clientConfigSchema>;

/**
 * The record a store may save, or a ConfigurationError (`invalid_client_record`) naming the
 * field. Stores call it in `saveClient`, so a bad record is refused before anything reads it.
 */
export function checkClientRecord(record: unknown): OAuthClientRecord {
  return parseConfig(clientRecordSchema, record, 'invalid_client_record');
}

/**
 * A client record as a store read it back (JSON text, or what its driver parsed) under `id`,
 * undefined when it is not one: written around the admin API, or damaged. Such a record is no client (a token
 * request is `invalid_client`, the admin API leaves it out and can delete it), never a store
 * failure: the store answered, and an outage would stop every client (docs/operator.md#applications).
 */
export function storedClientRecord(stored: unknown, id: string): OAuthClientRecord | undefined {
  const value = storedJson(stored);
  // A record filed under another id is damaged too: changing it would save it under its own.
  return clientRecordSchema.safeParse(value).success && (value as OAuthClientRecord).id === id ? (value as OAuthClientRecord) : undefined;
}

/**
 * The part of a grant's scope the client may still use: an application whose scopes were
 * narrowed gets, and is served, no more than it has now (RFC 6749 6 allows a narrower scope,
 * never a wider one; docs/oauth.md#tokens).
 */
export function allowedScope(scope: readonly string[], client: Pick<OAuthClientRecord, 'scopes'>): string[] {
  return scope.filter((s) => client.scopes.includes(s));
}

/** The stored record of a configured client, once its secret (if any) is hashed. */
export function clientRecordOf(config: ClientConfig, hashed: string | undefined): OAuthClientRecord {
  return {
    id: config.id,
    name: config.name ?? config.id,
    ...(hashed === undefined ? {} : { secretHash: hashed }),
    redirectUris: [...config.redirectUris],
    scopes: [...config.scopes],
    grants: [...config.grants],
    ...(config.introspect ? { introspect: true } : {}),
    ...(config.idTokenSigningAlg ? { idTokenSigningAlg: config.idTokenSigningAlg } : {}),
  };
}
