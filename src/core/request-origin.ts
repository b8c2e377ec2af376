/**
 * The origin a request was sent to, from its Host header: what the platform publishes (the OAuth
 * issuer, the API document's servers) when no public URL is configured (docs/oauth.md#the-issuer).
 */
import { BadRequestError } from './errors.js';
import { header, type PlatformRequest } from './http.js';

/** A host name, IPv4 address or IPv6 literal, and a port (RFC 3986 3.2.2, 3.2.3). */
const HOST_AND_PORT = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The Host header as a URL's authority, or undefined when no URL carries it as written: a port
 * past 65535, an IPv4 address out of range, a name a URL would read as another host (`0x7f.1` is
 * 127.0.0.1). An IPv6 literal is taken in the form a URL writes it (`[0:0::1]` is `[::1]`).
 */
export function authorityOf(host: string): string | undefined {
  if (!HOST_AND_PORT.test(host)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return undefined;
  }
  if (host.startsWith('[')) return url.host;
  return url.hostname === host.replace(/:[0-9]*$/, '').toLowerCase() ? url.host : undefined;
}

/** `http://` and the request's authority; a Host no URL can carry is the caller's mistake, a 400. */
export function requestOrigin(request: PlatformRequest): string {
  const authority = authorityOf(header(request, 'host') ?? 'localhost');
  if (!authority) throw new BadRequestError('The Host header must be a host name and port (RFC 9110 7.2); set oauth.publicUrl to publish a fixed URL');
  return `http://${authority}`;
}
