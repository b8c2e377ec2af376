/**
 * The caller's address for the brute-force limits (docs/deployment.md#clientip): the host's
 * `clientIp` option when it answers, else the address the adapter resolved (Express `req.ip`,
 * Koa `ctx.ip`, the socket's peer address); and what the limits count as one caller.
 */
import { isIPv6 } from 'node:net';
import { header, type PlatformRequest } from './http.js';
import type { Logger } from './logger.js';

/** Once per process, as express-rate-limit's `xForwardedForHeader` validation runs once. */
let warned = false;
let warnedUnknown = false;

/**
 * No address at all (a fetch handler called without the runtime's info, a `clientIp` that answers
 * nothing for a request without a socket): every such caller shares one count, and one guesser's
 * failures would slow them all.
 */
function unknownCaller(logger: Logger): string {
  if (!warnedUnknown) {
    warnedUnknown = true;
    logger.warn(
      {},
      "a request came with no caller address, so the brute-force limits count every such request as one caller: pass the runtime's info to the fetch handler (Bun's server, Deno's info) or set the clientIp option; see docs/hosts.md",
    );
  }
  return 'unknown';
}

function forwardedHeaderOf(request: PlatformRequest): string | undefined {
  if (header(request, 'x-forwarded-for') !== undefined) return 'X-Forwarded-For';
  if (header(request, 'forwarded') !== undefined) return 'Forwarded';
  return undefined;
}

export function clientAddress(
  chosen: ((request: PlatformRequest) => string | undefined) | undefined,
  logger: Logger,
): (request: PlatformRequest) => string {
  if (chosen) return (request) => chosen(request) ?? request.ip ?? unknownCaller(logger);
  return (request) => {
    if (!warned && !request.proxyTrusted) {
      const forwarded = forwardedHeaderOf(request);
      if (forwarded) {
        warned = true;
        // Behind a proxy every caller would share the proxy's address, and one guesser's failures
        // would slow them all.
        logger.warn(
          { header: forwarded, address: request.ip },
          `a request came through a proxy (${forwarded}), but the brute-force limits count the connection's address, the proxy's: set the clientIp option, or let the framework trust the proxy (Express 'trust proxy', Koa app.proxy); see docs/deployment.md`,
        );
      }
    }
    return request.ip ?? unknownCaller(logger);
  };
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is none. */
function ipv6Groups(ip: string): number[] | undefined {
  if (!isIPv6(ip)) return undefined;
  // The URL parser writes the address in its canonical form (RFC 5952): hex groups and one "::".
  const canonical = new URL(`http://[${ip.split('%')[0]}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  return [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back].map((group) => parseInt(group, 16));
}

/**
 * What the brute-force limits count as one caller: an IPv4 address as it is (an IPv4-mapped IPv6
 * address too, as a dual-stack socket reports IPv4 peers), an IPv6 address by its /56 network.
 * One end site is given a whole /56 or /64 (RFC 6177), so counting single IPv6 addresses would
 * hand a guesser billions of fresh counts; express-rate-limit's ipKeyGenerator counts /56 too.
 */
export function countedAddress(ip: string): string {
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${[groups[0]!, groups[1]!, groups[2]!, groups[3]! & 0xff00].map((group) => group.toString(16)).join(':')}::/56`;
}
