import { z } from 'zod';
import { basePathOption, functionOption, httpUrlOption, positiveInteger, storeOption } from '../core/option-schemas.js';
import { clientConfigSchema } from './client-record.js';
import { DEFAULT_ALG, readSigningKey, type SigningKey, type SigningKeyInput } from './keys.js';
import type { GrantType, OAuthStore } from './store/types.js';

/** The signed-in user as the host's `authenticate` returns it. */
export interface OAuthUser {
  /** Stable, unique user id: the id_token's `sub`. */
  sub: string;
  /** When the user signed in, seconds since the epoch. Needed for `max_age` and `prompt=login` to be exact. */
  auth_time?: number;
  /** Claims released by scope: name, preferred_username, email, email_verified, ... */
  [claim: string]: unknown;
}

export interface OAuthClientConfig {
  id: string;
  /** Shown on the consent page. Default: the id. */
  name?: string;
  /** From `hashClientSecret()`. A client needs this (or `secret`) unless it is `public`. */
  secretHash?: string;
  /** A plain secret is accepted for convenience and hashed at start-up; prefer `secretHash`. */
  secret?: string;
  /** A client without a secret (a browser or mobile app): it must use PKCE. Default false. */
  public?: boolean;
  /** Exact redirect URIs. */
  redirectUris: string[];
  /** Allowed scopes. Default: openid profile email offline_access. */
  scopes?: string[];
  /** Default: authorization_code and refresh_token. `client_credentials` (opt-in) needs a secret. */
  grants?: GrantType[];
  /** May introspect any token at `/oauth/introspect` (RFC 7662), not only its own. Default false. */
  introspect?: boolean;
  /**
   * Sign this client's id_tokens with another algorithm than RS256, e.g. `ES256` or `EdDSA`
   * (faster to sign and verify, smaller); a key of that algorithm must be in `signingKeys`.
   */
  idTokenSigningAlg?: 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA';
}

export interface OAuthLifetimes {
  /** Seconds. Default 60. */
  code?: number;
  /** Seconds. Default 3600. */
  accessToken?: number;
  /** Seconds. Default 14 days. */
  refreshToken?: number;
  /** Seconds. Default 3600. */
  idToken?: number;
}

export interface BruteForceOptions {
  /** Failed client authentications allowed per client id from one IP in `windowSeconds`. Default 10. */
  clientAuthFailures?: number;
  /** Failed client authentications allowed per IP, whatever the client ids, in `windowSeconds`. Default 100. */
  addressFailures?: number;
  /** Default 900 (15 minutes). */
  windowSeconds?: number;
  /**
   * How long an address that proved a client's secret stays known to the client, in seconds: while
   * its IPv6 /56 is at the limit through others' failures, it is judged by its own. Default 86400 (24 hours).
   */
  knownCallerSeconds?: number;
}

/** Options of the OAuth 2.0 / OpenID Connect server (`courierPlatform({ oauth })`); every one is documented in docs/options.md. */
export interface OAuthOptions<Req = unknown> {
  /**
   * The signed-in user of this request, or null. The host owns users and sessions; `req` is the
   * framework's own request (Express/Connect `req`, Koa `ctx`).
   */
  authenticate?: (req: Req) => OAuthUser | null | undefined | Promise<OAuthUser | null | undefined>;
  /** The host's login page; it receives `return_to` and must send the user back there. Default `/login`. */
  loginUrl?: string;
  /**
   * The platform's public origin and path prefix, e.g. `https://api.example.com` (or
   * `https://example.com/api` when mounted under `/api`). Default: the request's Host header and
   * mount path, for development.
   */
  publicUrl?: string;
  clients?: OAuthClientConfig[];
  /** Default: in memory. */
  store?: OAuthStore;
  /**
   * Deadline of each store call, in ms. A call that fails or is late answers 503 (RFC 6749
   * `temporarily_unavailable`) instead of hanging. Default 1000.
   */
  storeTimeoutMs?: number;
  /** Private keys (PEM or JWK), newest first: the first signs, all are published. Checked when the platform is built. Default: generated. */
  signingKeys?: SigningKeyInput[];
  lifetimes?: OAuthLifetimes;
  /**
   * Opt-in: seconds after a rotation during which the token it rotated out may still repeat it,
   * even once the answer was written, as long as its successor was never used. Default 0: only a
   * rotation whose answer was never written may be repeated, and any other presentation of an
   * earlier refresh token is a reuse that ends the grant (RFC 9700 4.14.2; docs/oauth.md#tokens).
   */
  refreshRetryGraceSeconds?: number;
  bruteForce?: BruteForceOptions;
  /** Where the server answers. Default `/oauth`. */
  basePath?: string;
}

const STORE_METHODS = [
  'getClient',
  'saveClient',
  'listClients',
  'deleteClient',
  'saveCode',
  'findCode',
  'consumeCode',
  'issueTokens',
  'findAccessToken',
  'findRefreshToken',
  'rotateRefreshToken',
  'confirmRotation',
  'revokeAccessToken',
  'revokeGrant',
  'revokeUserGrants',
  'getConsent',
  'saveConsent',
  'useOnce',
] as const satisfies readonly (keyof OAuthStore)[];

/** Refuses two items with the same key, naming the second and pointing at the first. */
function unique<T>(keyOf: (item: T) => string, problem: (key: string, first: number) => string, field: readonly PropertyKey[] = []) {
  return (items: T[], ctx: z.RefinementCtx) => {
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      const key = keyOf(item);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else ctx.addIssue({ code: 'custom', message: problem(key, first), path: [i, ...field] });
    });
  };
}

const signingKey = z.unknown().transform((input, ctx): SigningKey => {
  const key = readSigningKey(input);
  if (typeof key === 'string') {
    ctx.issues.push({ code: 'custom', message: key, input });
    return z.NEVER;
  }
  return key;
});

/** The OAuth part's options: the one place they are checked and their defaults set. */
export const oauthOptionsSchema = z.strictObject({
  authenticate: functionOption<NonNullable<OAuthOptions['authenticate']>>().optional(),
  loginUrl: z.string().regex(/^(\/|https?:\/\/)/, 'must be a path starting with / or an http(s) URL').default('/login'),
  publicUrl: httpUrlOption
    .refine((url) => !/[?#]/.test(url), 'must not have a query or fragment')
    .transform((url) => url.replace(/\/+$/, ''))
    .optional(),
  clients: z
    .array(clientConfigSchema)
    .superRefine(unique((client) => client.id, (_, first) => `is the id of clients[${first}] too`, ['id']))
    .default([]),
  store: storeOption<OAuthStore>(STORE_METHODS, 'an OAuthStore', { redis: 'createRedisOAuthStore', postgres: 'createPostgresOAuthStore' }).optional(),
  signingKeys: z
    .array(signingKey)
    .superRefine(unique((key: SigningKey) => key.kid, (kid, first) => `has the same kid (${kid}) as signingKeys[${first}]`))
    .refine((keys) => keys.length === 0 || keys.some((key) => key.alg === DEFAULT_ALG), {
      message: `needs an RS256 (RSA) key: RS256 signs by default and every relying party can verify it (OIDC Core 15.1); ES256 or EdDSA keys go beside it`,
    })
    .default([]),
  lifetimes: z
    .strictObject({
      code: positiveInteger.default(60),
      accessToken: positiveInteger.default(3600),
      refreshToken: positiveInteger.default(14 * 24 * 3600),
      idToken: positiveInteger.default(3600),
    })
    .prefault({}),
  refreshRetryGraceSeconds: z.number().int().min(0).max(3600).default(0),
  bruteForce: z
    .strictObject({ clientAuthFailures: positiveInteger.default(10), addressFailures: positiveInteger.default(100), windowSeconds: positiveInteger.default(900), knownCallerSeconds: positiveInteger.max(30 * 24 * 3600).default(24 * 3600) })
    .prefault({}),
  storeTimeoutMs: positiveInteger.max(60_000).default(1000),
  basePath: basePathOption.default('/oauth'),
}).superRefine((options, ctx) => {
  // Without configured keys the platform generates an RSA key: RS256 only.
  const published = new Set(options.signingKeys.length > 0 ? options.signingKeys.map((key) => key.alg) : [DEFAULT_ALG]);
  options.clients.forEach((client, i) => {
    if (client.idTokenSigningAlg !== undefined && !published.has(client.idTokenSigningAlg)) {
      ctx.addIssue({ code: 'custom', path: ['clients', i, 'idTokenSigningAlg'], message: `no key in oauth.signingKeys signs ${client.idTokenSigningAlg}` });
    }
  });
});

export type ResolvedOAuthOptions = z.output<typeof oauthOptionsSchema>;
