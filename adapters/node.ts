import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PlatformRequest, PlatformResponse } from '../src/core/http.js';

/** What body parsers leave on the request: body-parser sets `_body` once it has read the stream. */
type ParsedRequest = IncomingMessage & { body?: unknown; _body?: boolean };

/** The path part of a request URL. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Where the framework mounted the middleware: the front of the original URL that it stripped to
 * make `url` (Express and Connect from `req.url`, koa-mount from `ctx.url`); '' at the root.
 */
export function mountPathOf(originalUrl: string | undefined, url: string): string {
  if (!originalUrl) return '';
  const full = pathOf(originalUrl);
  const rest = pathOf(url);
  return full.length > rest.length && full.endsWith(rest) ? full.slice(0, full.length - rest.length) : '';
}

/** The caller's address as the framework resolved it, and whether the framework trusts a proxy's headers for it. */
export interface ClientAddress {
  ip: string | undefined;
  proxyTrusted: boolean;
}

/** Without a framework that reads forwarded headers: the socket's peer. */
export const socketAddress = (req: IncomingMessage): ClientAddress => ({ ip: req.socket.remoteAddress, proxyTrusted: false });

/**
 * Translates a Node request. `url` is the path relative to the mount point plus the query
 * string; `originalUrl` the URL before any mount stripped it.
 */
export function fromNodeRequest(
  req: ParsedRequest,
  url: string,
  originalUrl: string | undefined,
  parsedBody: unknown,
  raw: unknown = req,
  address: ClientAddress = socketAddress(req),
): PlatformRequest {
  const q = url.indexOf('?');
  const streamRead = req.readableEnded || req._body === true;
  let query: URLSearchParams | undefined;
  return {
    method: req.method ?? 'GET',
    path: q === -1 ? url : url.slice(0, q),
    mountPath: mountPathOf(originalUrl, url),
    // Parsed on first use: the quota guard and most routes never look at it.
    get query() {
      return (query ??= new URLSearchParams(q === -1 ? '' : url.slice(q + 1)));
    },
    headers: req.headers,
    parsedBody: streamRead ? parsedBody : undefined,
    body: streamRead ? undefined : req,
    ip: address.ip,
    proxyTrusted: address.proxyTrusted,
    raw,
  };
}

export function writeNodeResponse(res: ServerResponse, response: PlatformResponse): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  if (response.onSent) res.once('finish', response.onSent);
  res.end(response.body);
}

const NO_QUERY = new URLSearchParams();

/** What the quota guard reads of a request: the public path and the headers, nothing to parse. */
export function guardRequestOf(req: IncomingMessage, url: string, raw: unknown = req): PlatformRequest {
  return { method: req.method ?? 'GET', path: pathOf(url), query: NO_QUERY, headers: req.headers, raw };
}
