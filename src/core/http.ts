/**
 * Framework-neutral request and response. Adapters translate to and from these; nothing in
 * `src/` knows which server framework is in front of it.
 */

export type HeaderValue = string | string[] | undefined;

export interface PlatformRequest {
  /** Upper-case HTTP method. */
  readonly method: string;
  /** Path relative to where the platform is mounted, without the query string. */
  readonly path: string;
  /**
   * Where the host mounted the platform, as the request reached it: `/api` for
   * `app.use('/api', platform)`, `''` (or absent) at the root. URLs the platform publishes without
   * a configured `oauth.publicUrl` (issuer, discovery endpoints, the consent form) start with it.
   */
  readonly mountPath?: string;
  readonly query: URLSearchParams;
  /** Header names in lower case, as Node delivers them. */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /**
   * The body as the host's own parser left it (express.json, koa-bodyparser, express.raw),
   * or `undefined` when nobody has read the request stream.
   */
  readonly parsedBody?: unknown;
  /** The unread request stream; consumed at most once, and only when `parsedBody` is undefined. */
  readonly body?: AsyncIterable<Uint8Array>;
  /** The caller's address as the framework resolved it (Express `req.ip`, Koa `ctx.ip`), else the socket's peer. */
  readonly ip?: string;
  /** True when the framework was told to trust a proxy's forwarded headers (Express `trust proxy`, Koa `app.proxy`, Fastify `trustProxy`). */
  readonly proxyTrusted?: boolean;
  /** The framework's own request (Express/Connect `req`, Koa `ctx`), handed to host callbacks only. */
  readonly raw?: unknown;
}

export interface PlatformResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /**
   * Called by the adapter once the response has been written in full (Node's `finish`), never
   * when the connection closed before: a refresh then knows its answer left (docs/oauth.md#tokens).
   * An adapter that never calls it leaves each refresh pending until its new token is used.
   */
  onSent?: () => void;
}

/** Statuses whose answer has no body at all, not even an empty one (Fetch standard, "null body status"; RFC 9110 15.3.5, 15.4.5). */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

export function header(request: PlatformRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): PlatformResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}
