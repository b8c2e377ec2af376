/**
 * The caller's address for the brute-force limits (docs/deployment.md#clientip): the host's
 * `clientIp` option when it answers, else the address the adapter resolved (Express `req.ip`,
 * Koa `ctx.ip`, Fastify `request.ip`, the socket's peer address); and what the limits count as one caller.
 */
import { isIPv4, isIPv6 } from 'node:net';
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
function unknownCaller(logger: Logger, chosen: boolean): string {
  if (!warnedUnknown) {
    warnedUnknown = true;
    const remedy = chosen
      ? 'make the clientIp option answer an address for every request, or pass the runtime\'s info to the fetch handler (Bun\'s server, Deno\'s info) for it to fall back on'
      : "pass the runtime's info to the fetch handler (Bun's server, Deno's info) or set the clientIp option";
    logger.warn({}, `a request came with no caller address, so the brute-force limits count every such request as one caller: ${remedy}; see docs/hosts.md`);
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
  if (chosen) return (request) => chosen(request) ?? request.ip ?? unknownCaller(logger, true);
  return (request) => {
    if (!warned && !request.proxyTrusted) {
      const forwarded = forwardedHeaderOf(request);
      if (forwarded) {
        warned = true;
        // Behind a proxy every caller would share the proxy's address, and one guesser's failures
        // would slow them all.
        logger.warn(
          { header: forwarded, address: request.ip },
          `a request came through a proxy (${forwarded}), but the brute-force limits count the connection's address, the proxy's: set the clientIp option, or let the framework trust the proxy (Express 'trust proxy', Koa app.proxy, Fastify trustProxy); see docs/deployment.md`,
        );
      }
    }
    return request.ip ?? unknownCaller(logger, false);
  };
}

/** The eight 16-bit groups of an IPv6 address (a zone id dropped), or undefined when it is none. */
function ipv6Groups(ip: string): number[] | undefined {
  if (!isIPv6(ip)) return undefined;
  // The URL parser writes the address in its canonical form (RFC 5952): hex groups and one "::".
  const canonical = new URL(`http://[${ip.split('%')[0]}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  return [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back].map((group) => parseInt(group, 16));
}

type Counted = 'embedded IPv4' | '6to4 IPv4' | 'Teredo client' | 'link' | 'address';

/**
 * Ranges where the /56 would not be one site's, first match wins: [leading groups, prefix bits,
 * what counts]. Left at /56, as any site's block: unique local fc00::/7 (inside one site's /48,
 * RFC 4193 3.1).
 */
const SPECIAL_RANGES: readonly (readonly [readonly number[], number, Counted])[] = [
  // RFC 4291 2.5.5.2: a dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d.
  [[0, 0, 0, 0, 0, 0xffff], 96, 'embedded IPv4'],
  // RFC 2765 2.1: a stateless translator's IPv4-translated ::ffff:0:a.b.c.d.
  [[0, 0, 0, 0, 0xffff, 0], 96, 'embedded IPv4'],
  // RFC 6052 2.1: a translator presents every IPv4 client as 64:ff9b::a.b.c.d.
  [[0x64, 0xff9b, 0, 0, 0, 0], 96, 'embedded IPv4'],
  // RFC 8215: the operator picks the prefix length (RFC 6052 2.2; /64 is deployed), so the IPv4
  // need not be the last 32 bits; the whole address stands for one IPv4 client at any length.
  [[0x64, 0xff9b, 1], 48, 'address'],
  // RFC 4380 4: bits 32-63 are the Teredo server's IPv4, so its clients share the /56. The key is
  // the client's public IPv4 (the last 32 bits, inverted), not the whole address, from which one
  // IPv4 could mint fresh counts by port, random flags and server; the IPv4 cannot be forged, as
  // replies reach the client only through it.
  [[0x2001, 0], 32, 'Teredo client'],
  // RFC 3056 2: a 6to4 site's /48 is its IPv4's (bits 16-47), 256 /56s of one caller.
  [[0x2002], 16, '6to4 IPv4'],
  // RFC 4291 2.5.6: a host picks its link-local addresses freely, so single addresses would be
  // fresh counts for the asking; the link counts as one site, as a /56 does.
  [[0xfe80], 10, 'link'],
  // RFC 4291 2.5.2, 2.5.3: the unspecified and loopback addresses, each one host.
  [[0, 0, 0, 0, 0, 0, 0, 0], 128, 'address'],
  [[0, 0, 0, 0, 0, 0, 0, 1], 128, 'address'],
  // RFC 4291 2.5.5.1: the deprecated IPv4-compatible ::a.b.c.d.
  [[0, 0, 0, 0, 0, 0], 96, 'embedded IPv4'],
];

function inRange(groups: readonly number[], prefix: readonly number[], bits: number): boolean {
  return prefix.every((group, index) => {
    const maskBits = Math.min(16, Math.max(0, bits - index * 16));
    const mask = (0xffff << (16 - maskBits)) & 0xffff;
    return (groups[index]! & mask) === group;
  });
}

function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The address without the port or brackets a proxy may write around it (`203.0.113.7:443`,
 * `[2001:db8::1]:443`, RFC 7239 6): otherwise every source port would be a fresh count.
 */
function withoutPort(ip: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(ip);
  if (bracketed && isIPv6(bracketed[1]!.split('%')[0]!)) return bracketed[1]!;
  const withPort = /^([\d.]+):\d+$/.exec(ip);
  return withPort && isIPv4(withPort[1]!) ? withPort[1]! : ip;
}

/**
 * What the brute-force limits count as one caller: an IPv4 address as it is, an IPv6 address by
 * its /56 network. One end site is given a whole /56 or /64 (RFC 6177), so counting single IPv6
 * addresses would hand a guesser billions of fresh counts; express-rate-limit's ipKeyGenerator
 * counts /56 too. Where the /56 is not one site's (SPECIAL_RANGES) an address embedding a
 * client's IPv4 counts as that IPv4, and a link-local address by its link.
 */
export function countedAddress(given: string): string {
  const ip = withoutPort(given);
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  const counted = SPECIAL_RANGES.find(([prefix, bits]) => inRange(groups, prefix, bits))?.[2];
  if (counted === 'embedded IPv4') return ipv4Of(groups[6]!, groups[7]!);
  if (counted === '6to4 IPv4') return ipv4Of(groups[1]!, groups[2]!);
  if (counted === 'Teredo client') return ipv4Of(groups[6]! ^ 0xffff, groups[7]! ^ 0xffff);
  // The zone id names the link on this host (RFC 4007 11): one count per link.
  if (counted === 'link') return `fe80::/10%${(ip.split('%')[1] ?? '').toLowerCase()}`;
  if (counted === 'address') return groups.map((group) => group.toString(16)).join(':');
  return `${[groups[0]!, groups[1]!, groups[2]!, groups[3]! & 0xff00].map((group) => group.toString(16)).join(':')}::/56`;
}

/**
 * The caller's own address, where countedAddress counts a whole /56: the full IPv6 address (its
 * zone id and any port dropped). Everywhere else it is what countedAddress counts, which is
 * already one caller's (an IPv4 address, the IPv4 an IPv6 address carries, a link).
 */
export function exactAddress(given: string): string {
  const counted = countedAddress(given);
  if (!counted.endsWith('::/56')) return counted;
  return ipv6Groups(withoutPort(given))!.map((group) => group.toString(16)).join(':');
}
