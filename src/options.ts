import { z } from 'zod';
import type { Clock } from './core/clock.js';
import type { PlatformRequest } from './core/http.js';
import type { Logger } from './core/logger.js';
import type { OAuthOptions } from './oauth/options.js';
import type { TokenVerifier } from './openapi/guard.js';
import type { OnStoreError, QuotaDefaults, QuotaRule, QuotaStore, RuleSource } from './quota/index.js';
import type { CourierCredentials } from './courier/proxy.js';
import type { SignerOption } from './courier/signing.js';
import type { CourierTransport } from './courier/transport.js';

export interface CourierOptions {
  /** Where the courier open platform listens. Without it (and without `transport`) calls go to the built-in sandbox. */
  upstreamUrl?: string;
  /** Used when a caller sends no Basic Auth. Without them every call needs Basic Auth. */
  credentials?: CourierCredentials;
  /** The `version` field sent upstream. Default `'1.0'`. */
  version?: string;
  /** `'md5'` (default), `'hmac-sha256'` or `(fields, appSecret) => sign`. */
  signer?: SignerOption;
  /** Deadline of one upstream call, in ms. Default 10 000. */
  timeoutMs?: number;
  /** Extra attempts for read operations after a connection failure or 502/503/504. Default 2. */
  retries?: number;
  /** Replaces the HTTP transport (undici), e.g. with axios or an in-process sandbox. */
  transport?: CourierTransport;
  /** Where the proxy is mounted. Default `'/courier'`. */
  basePath?: string;
}

export interface QuotaOptions {
  /** Where counters live: memory (default, one process), Redis or PostgreSQL. */
  store?: QuotaStore;
  /** Client and global rules, or a source that loads them (e.g. from a database). */
  rules?: readonly QuotaRule[] | RuleSource;
  /** IANA zone the minute, day and month are aligned to. Default `UTC`. */
  timeZone?: string;
  /** The system rule. Default 60 / minute, 1000 / day, month unlimited (0), cost 1. */
  defaults?: Partial<QuotaDefaults>;
  /** `'open'` (default): admit and count locally while the store is down; `'closed'`: answer 503. */
  onStoreError?: OnStoreError;
  /** Deadline of one store call in ms. Default 1000. */
  storeTimeoutMs?: number;
  /** With `'open'`, cap each client and path at its minute limit locally while the store is down. Default true. */
  insurance?: boolean;
  /** Where get_quota answers. Default `/openapi/v1`. */
  basePath?: string;
  /** Resolves a Bearer token to the calling application; needed only when the platform's own OAuth server is off. */
  verifyToken?: TokenVerifier;
}

/**
 * Options of `courierPlatform()`. `Req` is the framework's request type that host callbacks
 * (`oauth.authenticate`) receive: Express/Connect `req`, Koa `ctx`.
 */
export interface CourierPlatformOptions<Req = unknown> {
  /** The courier proxy; `false` switches it off. */
  courier?: CourierOptions | false;
  /** The OAuth 2.0 / OpenID Connect server; `false` switches it off. */
  oauth?: OAuthOptions<Req> | false;
  /** Quotas for the host's `/openapi/v1/*` routes and get_quota; `false` switches them off. */
  quota?: QuotaOptions | false;
  /** The clock every expiry and period is measured with. Default `Date.now`. */
  now?: Clock;
  /** The caller's IP for brute-force limits. Default: the socket's peer address (set this behind a proxy). */
  clientIp?: (request: PlatformRequest) => string | undefined;
  /** Receives warnings and errors; secrets are masked before it sees anything. Default: console. */
  logger?: Logger;
  /** Largest request body the platform reads itself, in bytes. Default 102 400 (100 KiB). */
  bodyLimit?: number;
}

const fn = <T>(what: string) => z.custom<T>((value) => typeof value === 'function', { message: `must be ${what}` });
const text = z.string().min(1);

const courierSchema = z.strictObject({
  upstreamUrl: z.url({ protocol: /^https?$/ }).optional(),
  credentials: z.strictObject({ appId: text, appSecret: text }).optional(),
  version: text.optional(),
  signer: z.union([z.literal(['md5', 'hmac-sha256']), fn<SignerOption>('a function')]).optional(),
  timeoutMs: z.number().int().positive().optional(),
  retries: z.number().int().min(0).max(5).optional(),
  transport: fn<CourierTransport>('a function').optional(),
  basePath: z.string().regex(/^\/[A-Za-z0-9/_-]*[^/]$/, 'must start with / and not end with /').optional(),
});

const loggerSchema = z.custom<Logger>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    ['debug', 'info', 'warn', 'error'].every((level) => typeof (value as Record<string, unknown>)[level] === 'function'),
  { message: 'must have debug, info, warn and error functions' },
);

const positive = z.number().int().positive();
const oauthSchema = z.strictObject({
  authenticate: fn('a function').optional(),
  loginUrl: z.string().regex(/^(\/|https?:\/\/)/, 'must be a path starting with / or an http(s) URL').optional(),
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  clients: z
    .array(
      z.strictObject({
        id: z.string().regex(/^[\x20-\x7E]+$/, 'must be printable ASCII'),
        name: text.optional(),
        secretHash: text.optional(),
        secret: z.string().min(8, 'must be at least 8 characters').optional(),
        redirectUris: z.array(z.url()).min(1),
        scopes: z.array(text).optional(),
        grants: z.array(z.literal(['authorization_code', 'refresh_token'])).optional(),
      }).refine((c) => !(c.secret && c.secretHash), 'give secret or secretHash, not both'),
    )
    .optional(),
  store: z.custom((v) => typeof v === 'object' && v !== null && typeof (v as { getClient?: unknown }).getClient === 'function', {
    message: 'must implement OAuthStore',
  }).optional(),
  storeTimeoutMs: positive.max(60_000).optional(),
  signingKeys: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])).optional(),
  lifetimes: z.strictObject({ code: positive.optional(), accessToken: positive.optional(), refreshToken: positive.optional(), idToken: positive.optional() }).optional(),
  bruteForce: z.strictObject({ clientAuthFailures: positive.optional(), windowSeconds: positive.optional() }).optional(),
  basePath: z.string().regex(/^\/[A-Za-z0-9/_-]*[^/]$/, 'must start with / and not end with /').optional(),
});

const objectWith = (method: string) =>
  z.custom((v) => typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>)[method] === 'function', {
    message: `must be an object with a ${method}() method`,
  });
const quotaSchema = z.strictObject({
  store: objectWith('consume').optional(),
  rules: z.union([z.array(z.record(z.string(), z.unknown())), objectWith('findRules')]).optional(),
  timeZone: text.optional(),
  defaults: z.record(z.string(), z.unknown()).optional(),
  onStoreError: z.literal(['open', 'closed']).optional(),
  storeTimeoutMs: positive.optional(),
  insurance: z.boolean().optional(),
  basePath: z.string().regex(/^\/[A-Za-z0-9/_-]*[^/]$/, 'must start with / and not end with /').optional(),
  verifyToken: fn('a function').optional(),
});

const optionsSchema = z.strictObject({
  quota: z.union([z.literal(false), quotaSchema]).optional(),
  courier: z.union([z.literal(false), courierSchema]).optional(),
  oauth: z.union([z.literal(false), oauthSchema]).optional(),
  now: fn<Clock>('a function returning milliseconds').optional(),
  clientIp: fn('a function').optional(),
  logger: loggerSchema.optional(),
  bodyLimit: z.number().int().positive().optional(),
});

type Issue = z.core.$ZodIssue;

/**
 * `courier` and `oauth` are unions with `false`; zod reports a bad nested value as "invalid
 * union". Descend into the object branch so the message names the field that is wrong.
 */
function leafIssues(issue: Issue, prefix: readonly PropertyKey[] = []): { path: PropertyKey[]; issue: Issue }[] {
  const path = [...prefix, ...issue.path];
  if (issue.code !== 'invalid_union') return [{ path, issue }];
  const branches = issue.errors.filter((branch) => !branch.every((i) => i.code === 'invalid_value' && i.values.includes(false)));
  const chosen = branches.length > 0 ? branches : issue.errors;
  return chosen.flat().flatMap((inner) => leafIssues(inner, path));
}

/** Checks options once, at the factory: a typo or a bad value throws a TypeError naming it. */
export function checkOptions<Req>(options: CourierPlatformOptions<Req> | undefined): CourierPlatformOptions<Req> {
  const result = optionsSchema.safeParse(options ?? {});
  if (result.success) return options ?? {};
  const problems = result.error.issues.flatMap((top) => leafIssues(top)).map(({ path, issue }) => {
    const name = path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') return `unknown option ${[name, ...issue.keys].filter(Boolean).join('.')}`;
    return `${name || 'options'}: ${issue.message}`;
  });
  throw new TypeError(`courier-platform: ${problems.join('; ')}`);
}
