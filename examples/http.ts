/**
 * What the example's host-neutral parts speak: a request as every framework can describe it, and
 * an answer every framework can send. Each file in hosts/ translates its framework's request into
 * a `SiteRequest` and writes a `SiteAnswer` back, the way the platform's own adapters do.
 */

export interface SiteRequest {
  method: string;
  /** The path and query as the browser sent them, e.g. `/login?return_to=%2F`. */
  url: string;
  /** A request header by its lower-case name. */
  header(name: string): string | undefined;
  /** The client's address as the host sees it (docs/deployment.md#clientip). */
  ip: string;
  /** The unread request body; only the form handlers read it. */
  body: AsyncIterable<Uint8Array> | null;
}

export interface SiteAnswer {
  status: number;
  headers: Record<string, string>;
  /** Set-Cookie lines, one per cookie. */
  cookies: string[];
  body: string | Uint8Array;
}

export function answer(status: number, body: string | Uint8Array, headers: Record<string, string> = {}, cookies: string[] = []): SiteAnswer {
  return { status, headers, cookies, body };
}

/** A redirect that carries the cookies the step before it set or cleared. */
export function redirect(status: 302 | 303, location: string, cookies: string[] = []): SiteAnswer {
  return answer(status, '', { location }, cookies);
}

/** The query of a request's URL. */
export const queryOf = (request: SiteRequest) => new URL(request.url, 'http://host').searchParams;
