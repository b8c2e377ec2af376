/**
 * Options of `courierPlatform()`: the top level here, each part's in its own module
 * (courier/options.ts, oauth/options.ts, quota/options.ts). Everything is checked once, when the
 * platform is built; a mistake throws a ConfigurationError (a TypeError) naming the field.
 */
import { z } from 'zod';
import { adminOptionsSchema, type AdminOptions, type ResolvedAdminOptions } from './admin/options.js';
import type { Clock } from './core/clock.js';
import { configurationError } from './core/errors.js';
import type { PlatformRequest } from './core/http.js';
import type { Logger } from './core/logger.js';
import { functionOption, loggerOption, positiveInteger } from './core/option-schemas.js';
import { parseConfig } from './core/validation.js';
import { courierOptionsSchema, type CourierOptions, type ResolvedCourierOptions } from './courier/options.js';
import { oauthOptionsSchema, type OAuthOptions, type ResolvedOAuthOptions } from './oauth/options.js';
import { quotaOptionsSchema, type QuotaOptions } from './quota/options.js';
import type { OAuthEvent } from './oauth/events.js';
import type { QuotaEvent } from './quota/events.js';

export type { AdminOptions, CourierOptions, QuotaOptions };

/** The API document at `{quota.basePath}/openapi.json` (docs/api-document.md). */
export interface ApiDocumentOptions {
  /** `info.title`. Default `'courier-platform'`. */
  title?: string;
  /** `info.version`, the version of your API. Default `'1.0.0'`. */
  version?: string;
  /** Path items of your own (OpenAPI 3.1), listed beside the platform's; a path the platform also lists is the platform's. */
  paths?: Record<string, Record<string, unknown>>;
}

/** Every event `onEvent` hears: a token's life, or a quota crossing a threshold or refusing a call. */
export type PlatformEvent = OAuthEvent | QuotaEvent;

/**
 * Options of `courierPlatform()`. `Req` is the framework's request type that host callbacks
 * (`oauth.authenticate`) receive: Express/Connect `req`, Koa `ctx`.
 */
export interface CourierPlatformOptions<Req = unknown> {
  /** The courier proxy; `false` switches it off. */
  courier?: CourierOptions | false;
  /** The OAuth 2.0 / OpenID Connect server; `false` switches it off. */
  oauth?: OAuthOptions<Req> | false;
  /**
   * Quotas for the host's `/openapi/v1/*` routes and get_quota; `false` switches them off. On by
   * default while the OAuth server is on (its tokens identify the calling application).
   */
  quota?: QuotaOptions | false;
  /** The operator's API (docs/operator.md); off (`false`) unless given. */
  admin?: AdminOptions<Req> | false;
  /** Told of token and quota events (docs/operator.md#events), never with a token or secret; a hook that throws is logged and ignored. */
  onEvent?: (event: PlatformEvent) => void | Promise<void>;
  /** The clock every expiry and period is measured with. Default `Date.now`. */
  now?: Clock;
  /** The caller's IP for brute-force limits. Default: the framework's (Express `req.ip`, Koa `ctx.ip`), else the socket's peer address. */
  clientIp?: (request: PlatformRequest) => string | undefined;
  /** Receives warnings and errors; secrets are masked before it sees anything. Default: console. */
  logger?: Logger;
  /** Largest request body the platform reads itself, in bytes. Default 102 400 (100 KiB). */
  bodyLimit?: number;
  /** The API document's title, version and the host's own path items. */
  apiDocument?: ApiDocumentOptions;
}

const part = <S extends z.ZodType>(schema: S) => z.union([z.literal(false), schema], { error: 'must be false or an object of options' });

/** The top level; each part's options are checked by that part's own schema. */
export const platformOptionsSchema = z.strictObject({
  courier: part(courierOptionsSchema).prefault({}),
  oauth: part(oauthOptionsSchema).prefault({}),
  quota: part(quotaOptionsSchema).optional(),
  admin: part(adminOptionsSchema).default(false),
  onEvent: functionOption<NonNullable<CourierPlatformOptions['onEvent']>>().optional(),
  now: functionOption<Clock>('a function returning ms since the epoch').optional(),
  clientIp: functionOption<NonNullable<CourierPlatformOptions['clientIp']>>().optional(),
  logger: loggerOption.optional(),
  bodyLimit: positiveInteger.default(100 * 1024),
  apiDocument: z
    .strictObject({
      title: z.string().min(1).default('courier-platform'),
      version: z.string().min(1).default('1.0.0'),
      paths: z.record(z.string().startsWith('/'), z.record(z.string(), z.unknown())).optional(),
    })
    .prefault({}),
});

export type ResolvedQuotaOptions = z.output<typeof quotaOptionsSchema>;

/** The options with every default in place; a part that is off is `false`. */
export interface ResolvedPlatformOptions {
  courier: ResolvedCourierOptions | false;
  oauth: ResolvedOAuthOptions | false;
  quota: ResolvedQuotaOptions | false;
  admin: ResolvedAdminOptions | false;
  onEvent?: CourierPlatformOptions['onEvent'];
  now?: Clock;
  clientIp?: CourierPlatformOptions['clientIp'];
  logger?: Logger;
  bodyLimit: number;
  apiDocument: z.output<typeof platformOptionsSchema.shape.apiDocument>;
}

/** The parts that claim every request under their base path; another part nested there would never be reached. */
function checkBasePaths(options: ResolvedPlatformOptions): void {
  const claimed = (['oauth', 'courier', 'admin'] as const).filter((name) => options[name] !== false);
  const all = (['oauth', 'courier', 'quota', 'admin'] as const).filter((name) => options[name] !== false);
  const pathOf = (name: (typeof all)[number]) => (options[name] as { basePath: string }).basePath;
  for (const owner of claimed) {
    for (const other of all) {
      if (other === owner) continue;
      const inside = pathOf(other) === pathOf(owner) || pathOf(other).startsWith(`${pathOf(owner)}/`);
      if (inside) throw configurationError('invalid_option', `${other}.basePath`, `${pathOf(other)} lies within ${owner}.basePath ${pathOf(owner)}, which answers every request under it`);
    }
  }
}

/** `app.use(courierPlatform())`: what the Node frameworks and Hono take. */
const MOUNT_CALLED = 'write app.use(courierPlatform()), not app.use(courierPlatform)';

/**
 * What a framework passes to a middleware or a fetch server to its handler: a Node request
 * (Express, Connect), a Koa or Hono context, a fetch `Request`. The factory receives one when it
 * is mounted without being called; the answer is what it received and what to write instead.
 */
function frameworkArgument(value: unknown): { received: string; write: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const has = (name: string) => name in value && (value as Record<string, unknown>)[name] !== undefined;
  if (has('req') && has('res') && has('request') && has('response')) return { received: 'a Koa context', write: MOUNT_CALLED };
  if (has('headers') && has('method') && has('socket')) return { received: 'an HTTP request', write: MOUNT_CALLED };
  if (typeof Request === 'function') {
    // Hono's context holds the fetch Request as `c.req.raw`.
    if (has('req') && (value as { req: { raw?: unknown } | null }).req?.raw instanceof Request) return { received: 'a Hono context', write: MOUNT_CALLED };
    if (value instanceof Request) {
      return { received: 'a fetch Request', write: 'create the handler once, const platform = courierPlatform(), and call it for each request, await platform(request, info)' };
    }
  }
  return undefined;
}

/** Checks options once, at the factory: a typo or a bad value throws a ConfigurationError naming it. */
export function checkOptions<Req>(options: CourierPlatformOptions<Req> | undefined): ResolvedPlatformOptions {
  const mistake = frameworkArgument(options);
  if (mistake) {
    throw configurationError('invalid_option', 'options', `is ${mistake.received}: courierPlatform was mounted without being called; ${mistake.write}`);
  }
  const parsed = parseConfig(platformOptionsSchema, options ?? {}, 'invalid_option');
  // Without a choice, quotas follow the OAuth server: its tokens are what identifies an application.
  const quota = parsed.quota ?? (parsed.oauth === false ? false : quotaOptionsSchema.parse({}));
  const resolved: ResolvedPlatformOptions = { ...parsed, quota };
  if (quota !== false && parsed.oauth === false && !quota.verifyToken) {
    throw configurationError('invalid_option', 'quota.verifyToken', 'is required when the OAuth server is off (oauth: false): nothing else can identify the calling application');
  }
  checkBasePaths(resolved);
  return resolved;
}
