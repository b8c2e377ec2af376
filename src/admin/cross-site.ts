/**
 * Admin writes refuse what another site's page can send (docs/operator.md#cross-site-requests).
 * When `admin.authorize` reads a session cookie, the browser attaches it to a form or `fetch`
 * another site sends, so a write is refused when the browser says it comes from elsewhere
 * (`Origin`, Fetch Metadata's `Sec-Fetch-Site`) and when its body is not JSON: a cross-site page
 * cannot send `application/json` without a CORS preflight, which the admin API never grants.
 * Machines send neither header and keep working.
 */
import { ForbiddenError, UnsupportedMediaTypeError } from '../core/errors.js';
import { header, type PlatformRequest } from '../core/http.js';

const WRITES: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

export interface CrossSiteOptions {
  /** `oauth.publicUrl`: the origin browsers use; without it, the request's Host is its own origin. */
  publicUrl: string | undefined;
  /** Origins of other sites whose pages may write (`admin.allowedOrigins`), e.g. an operators' console. */
  allowedOrigins: readonly string[];
}

export type CrossSiteCheck = (request: PlatformRequest) => void;

/**
 * The Origin header parsed; undefined for `null` (an opaque origin), anything unparsable, and
 * anything a browser never sends as an origin (RFC 6454 7.1: scheme, host and port only), such as
 * `https://user@host`, whose userinfo the URL parser would silently drop.
 */
function parsedOrigin(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.origin === value.toLowerCase() ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Fetch Metadata Request Headers (W3C), 2.1: only these say the page is this origin's, or none (typed, bookmarked). */
const OWN_SITES: ReadonlySet<string> = new Set(['same-origin', 'none']);

export function crossSiteCheck({ publicUrl, allowedOrigins }: CrossSiteOptions): CrossSiteCheck {
  const publicOrigin = publicUrl === undefined ? undefined : new URL(publicUrl).origin;
  const allowed = new Set(allowedOrigins);
  const own = (origin: URL, request: PlatformRequest) =>
    publicOrigin === undefined ? origin.host === header(request, 'host')?.toLowerCase() : origin.origin === publicOrigin;

  const refuse = (request: PlatformRequest) => {
    const origin = header(request, 'origin');
    if (origin !== undefined && allowed.has(origin)) return undefined;
    const parsed = origin === undefined ? undefined : parsedOrigin(origin);
    if (origin !== undefined && !(parsed && own(parsed, request))) return `its Origin (${origin.slice(0, 100)}) is not this site's`;
    // `same-site` is a sibling subdomain, still not this origin; a value this check does not know is refused too.
    const site = header(request, 'sec-fetch-site');
    if (site !== undefined && !OWN_SITES.has(site.trim().toLowerCase())) return `the browser says it comes from another site (Sec-Fetch-Site: ${site.slice(0, 40)})`;
    return undefined;
  };

  return (request) => {
    if (!WRITES.has(request.method)) return;
    const reason = refuse(request);
    if (reason) {
      throw new ForbiddenError(
        `Admin writes are refused from other sites' pages: ${reason}. Call the admin API from this site, or list the page's origin in admin.allowedOrigins`,
      );
    }
    const type = header(request, 'content-type');
    const hasBody = type !== undefined || header(request, 'transfer-encoding') !== undefined || Number(header(request, 'content-length') ?? 0) > 0;
    if (hasBody && !(type !== undefined && JSON_TYPE.test(type))) {
      throw new UnsupportedMediaTypeError('Admin writes take a JSON body (Content-Type: application/json) or none');
    }
  };
}
