/**
 * One error family for the whole platform: every error the library throws, rejects with or
 * answers with carries a stable `code` (listed in docs/errors.md).
 *
 * - `PlatformError` and its subclasses are answers: handlers throw them and the core renders them
 *   as the envelope (`{ code: 1, message, data }`) or as RFC 6749 JSON on /oauth, so adapters
 *   never format errors and no stack trace reaches a response.
 * - `ConfigurationError` is a mistake in the host's code: a bad option, client record or
 *   argument. It extends TypeError and is thrown when the mistake is made (at `courierPlatform()`
 *   and the other factories, by a store's `saveClient`, by a call such as
 *   `platform.revokeGrants()` with an argument it cannot use), never answered over HTTP.
 */

/**
 * Codes of errors answered over HTTP, with the status each is answered with: the one table a
 * `PlatformError` takes its status from (docs/errors.md#http-errors).
 */
export const PLATFORM_ERROR_STATUS = {
  invalid_request: 400,
  forbidden_field: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  quota_exceeded: 429,
  too_many_failures: 429,
  internal_error: 500,
  host_callback_failed: 500,
  upstream_error: 502,
  oauth_unavailable: 503,
  quota_store_unavailable: 503,
  store_unavailable: 503,
  upstream_timeout: 504,
} as const;

export type PlatformErrorCode = keyof typeof PLATFORM_ERROR_STATUS;

/** Codes of configuration errors (thrown, never answered). */
export const CONFIGURATION_ERROR_CODES = ['invalid_option', 'invalid_client_record', 'invalid_argument'] as const;

export type ConfigurationErrorCode = (typeof CONFIGURATION_ERROR_CODES)[number];

export interface FieldIssue {
  /** Dotted path of the offending field, e.g. `goods[0].goodsName`. */
  field: string;
  /** Machine-readable rule name, e.g. `required`, `enum`, `type`. */
  rule: string;
  message: string;
}

export interface PlatformErrorInit {
  data?: unknown;
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An answer of the platform. Its `status` is the one PLATFORM_ERROR_STATUS gives its `code`, so
 * the two never disagree: a new kind of answer is a new code in that table.
 */
export class PlatformError extends Error {
  readonly code: PlatformErrorCode;
  readonly status: number;
  /** Goes into the envelope's `data`; must never hold a secret. */
  readonly data: unknown;
  readonly headers: Record<string, string>;

  constructor(code: PlatformErrorCode, message: string, init: PlatformErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = PLATFORM_ERROR_STATUS[code];
    this.code = code;
    this.data = init.data ?? null;
    this.headers = init.headers ?? {};
  }
}

/** `field: message; field: message`, as a ConfigurationError's message lists its issues. */
export function issuesText(issues: readonly FieldIssue[]): string {
  return issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ');
}

/**
 * A bad option, client record or argument. `field` names what is wrong (`oauth.clients[0].secretHash`,
 * `redirectUris[0]`), and the message names every problem found at once.
 *
 * @example
 * import { ConfigurationError } from 'courier-platform';
 * import { courierPlatform } from 'courier-platform/express';
 *
 * try {
 *   courierPlatform({ courier: { timeoutMs: -1 } });
 * } catch (error) {
 *   if (error instanceof ConfigurationError) console.error(error.code, error.field); // invalid_option courier.timeoutMs
 * }
 */
export class ConfigurationError extends TypeError {
  readonly code: ConfigurationErrorCode;
  /** The first offending field; the message lists all of them. */
  readonly field: string;
  readonly issues: readonly FieldIssue[];

  constructor(code: ConfigurationErrorCode, issues: readonly FieldIssue[], options?: { cause?: unknown }) {
    super(`courier-platform: ${issuesText(issues)}`, options);
    this.name = new.target.name;
    this.code = code;
    this.field = issues[0]?.field ?? '';
    this.issues = issues;
  }
}

/** A ConfigurationError about one field. */
export function configurationError(code: ConfigurationErrorCode, field: string, message: string, cause?: unknown): ConfigurationError {
  return new ConfigurationError(code, [{ field, rule: 'custom', message }], cause === undefined ? undefined : { cause });
}

/**
 * Broken rules an answer lists at most (docs/errors.md): enough to mend any request, and a body of
 * thousands of unknown keys cannot make the answer many times larger than itself.
 */
export const MAX_LISTED_ISSUES = 100;

export class ValidationError extends PlatformError {
  /** Every broken rule; the answer's `data.errors` lists the first MAX_LISTED_ISSUES. */
  readonly issues: readonly FieldIssue[];

  constructor(issues: readonly FieldIssue[]) {
    const first = issues[0];
    const summary = first ? `${first.field}: ${first.message}` : 'invalid request';
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super('invalid_request', `Validation failed: ${summary}${more}`, { data: { errors: issues.slice(0, MAX_LISTED_ISSUES) } });
    this.issues = issues;
  }
}

export class BadRequestError extends PlatformError {
  constructor(message: string, code: 'invalid_request' | 'forbidden_field' = 'invalid_request') {
    super(code, message);
  }
}

export class UnauthorizedError extends PlatformError {
  constructor(message: string, challenge?: string) {
    super('unauthorized', message, challenge ? { headers: { 'www-authenticate': challenge } } : {});
  }
}

/** The caller is known but may not do this (the admin API's operator check said no). */
export class ForbiddenError extends PlatformError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** Too many failed credentials from one client address (wrong admin tokens): wait `retryAfter` seconds. */
export class TooManyFailuresError extends PlatformError {
  constructor(message: string, retryAfter: number) {
    super('too_many_failures', message, { headers: { 'retry-after': String(retryAfter) } });
  }
}

/** The request is well formed but clashes with what exists (a configured client changed through the admin API). */
export class ConflictError extends PlatformError {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class NotFoundError extends PlatformError {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class MethodNotAllowedError extends PlatformError {
  constructor(allowed: readonly string[]) {
    super('method_not_allowed', `Method not allowed; use ${allowed.join(' or ')}`, {
      headers: { allow: allowed.join(', ') },
    });
  }
}

export class PayloadTooLargeError extends PlatformError {
  constructor(limit: number) {
    super('payload_too_large', `Request body is larger than the limit of ${limit} bytes`);
  }
}

export class UnsupportedMediaTypeError extends PlatformError {
  /** `headers`: `Accept-Encoding` when it is the body's content coding that is refused (RFC 7694 3). */
  constructor(message: string, headers?: Record<string, string>) {
    super('unsupported_media_type', message, headers ? { headers } : {});
  }
}

/**
 * A callback of the host (`oauth.authenticate`) threw or answered something unusable. The cause
 * is logged with its stack; the caller sees a 500 that says the host's code failed.
 */
export class HostCallbackError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super('host_callback_failed', message, { cause });
  }
}

export class UpstreamError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super('upstream_error', message, { cause });
  }
}

export class UpstreamTimeoutError extends PlatformError {
  constructor(timeoutMs: number, cause?: unknown) {
    super('upstream_timeout', `The courier platform did not answer within ${timeoutMs} ms`, { cause });
  }
}

/**
 * A shared store (Redis, PostgreSQL) failed or missed its deadline. A 503 with `Retry-After`: the
 * caller's request was fine and the next one tries the store again. The client sees no detail of
 * the failure; the log has it, once per outage (docs/stores.md#deadlines-and-outages).
 */
export class StoreUnavailableError extends PlatformError {
  readonly store: string;

  constructor(store: string, cause?: unknown) {
    super('store_unavailable', 'The service is temporarily unavailable; retry shortly', { cause, headers: { 'retry-after': '1' } });
    this.store = store;
  }
}
