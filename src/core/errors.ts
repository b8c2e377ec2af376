/**
 * One error family for the whole platform. Handlers throw these; the core turns them into the
 * contract's envelope, so adapters never format errors and no stack trace reaches a response.
 */

export type PlatformErrorCode =
  | 'invalid_request'
  | 'forbidden_field'
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'upstream_error'
  | 'upstream_timeout'
  | 'store_unavailable'
  | 'internal_error';

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

export class PlatformError extends Error {
  readonly code: PlatformErrorCode;
  readonly status: number;
  /** Goes into the envelope's `data`; must never hold a secret. */
  readonly data: unknown;
  readonly headers: Record<string, string>;

  constructor(status: number, code: PlatformErrorCode, message: string, init: PlatformErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.data = init.data ?? null;
    this.headers = init.headers ?? {};
  }
}

export class ValidationError extends PlatformError {
  readonly issues: readonly FieldIssue[];

  constructor(issues: readonly FieldIssue[]) {
    const first = issues[0];
    const summary = first ? `${first.field}: ${first.message}` : 'invalid request';
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(400, 'invalid_request', `Validation failed: ${summary}${more}`, { data: { errors: issues } });
    this.issues = issues;
  }
}

export class BadRequestError extends PlatformError {
  constructor(message: string, code: PlatformErrorCode = 'invalid_request') {
    super(400, code, message);
  }
}

export class UnauthorizedError extends PlatformError {
  constructor(message: string, challenge?: string) {
    super(401, 'unauthorized', message, challenge ? { headers: { 'www-authenticate': challenge } } : {});
  }
}

export class NotFoundError extends PlatformError {
  constructor(message: string) {
    super(404, 'not_found', message);
  }
}

export class MethodNotAllowedError extends PlatformError {
  constructor(allowed: readonly string[]) {
    super(405, 'method_not_allowed', `Method not allowed; use ${allowed.join(' or ')}`, {
      headers: { allow: allowed.join(', ') },
    });
  }
}

export class PayloadTooLargeError extends PlatformError {
  constructor(limit: number) {
    super(413, 'payload_too_large', `Request body is larger than the limit of ${limit} bytes`);
  }
}

export class UnsupportedMediaTypeError extends PlatformError {
  constructor(message: string) {
    super(415, 'unsupported_media_type', message);
  }
}

export class UpstreamError extends PlatformError {
  constructor(message: string, cause?: unknown) {
    super(502, 'upstream_error', message, { cause });
  }
}

export class UpstreamTimeoutError extends PlatformError {
  constructor(timeoutMs: number, cause?: unknown) {
    super(504, 'upstream_timeout', `The courier platform did not answer within ${timeoutMs} ms`, { cause });
  }
}

/**
 * A shared store (Redis, PostgreSQL) failed or missed its deadline. A 503 with `Retry-After`: the
 * caller's request was fine and the next one tries the store again. The client sees no detail of
 * the failure; the log has it, once per outage.
 */
export class StoreUnavailableError extends PlatformError {
  readonly store: string;

  constructor(store: string, cause?: unknown) {
    super(503, 'store_unavailable', 'The service is temporarily unavailable; retry shortly', { cause, headers: { 'retry-after': '1' } });
    this.store = store;
  }
}
