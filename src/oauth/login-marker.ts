/**
 * The login round trip of prompt=login and max_age (OIDC Core 3.1.2.1): the platform sends the
 * user to the host's login page with a return address that carries a marker saying a login was
 * asked for, when, for which request, and for which browser. The browser is named by a cookie set
 * with the marker (HttpOnly, SameSite=Lax, only for the authorize path), whose digest the marker
 * holds: a return address fetched by someone else and handed to a victim whose browser holds an
 * older session vouches for nothing there (docs/oauth.md#how-a-sign-in-goes).
 */
import { createHash, randomBytes } from 'node:crypto';
import { header, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import { nowSeconds, type OAuthContext } from './context.js';
import { seal, unseal } from './signed-payload.js';

/** The query parameter of the return address, and the name of the browser's cookie. */
export const LOGIN_MARKER = 'cp_login';
const MARKER_SECONDS = 600;
const BROWSER_ID = /^[A-Za-z0-9_-]{22}$/;

type Params = Record<string, string>;

interface LoginMarker {
  at: number;
  client: string;
  /** A digest of the request's parameters: moved to another request, the marker fits nothing. */
  request: string;
  /** A digest of the browser's cookie. */
  browser: string;
  id: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** The request's parameters but the marker. */
function requestDigest(params: Params): string {
  const entries = Object.entries(params)
    .filter(([key]) => key !== LOGIN_MARKER)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return digest(JSON.stringify(entries));
}

/** The browser's id from its cookie, when it sent a well-formed one. */
function browserId(request: PlatformRequest): string | undefined {
  for (const part of (header(request, 'cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === LOGIN_MARKER) {
      const value = part.slice(eq + 1).trim();
      if (BROWSER_ID.test(value)) return value;
    }
  }
  return undefined;
}

/**
 * Where the host's login page sends the user back: the same request (prompt=login and max_age
 * included, so dropping the marker asks again), with the marker; and the browser's cookie. A
 * browser keeps its id across markers, so two tabs signing in at once both come back.
 */
export function loginRedirect(context: OAuthContext, request: PlatformRequest, issuer: string, params: Params): PlatformResponse {
  const back = new URL(`${issuer}/authorize`);
  for (const [key, value] of Object.entries(params)) if (key !== LOGIN_MARKER) back.searchParams.set(key, value);
  const at = nowSeconds(context);
  const browser = browserId(request) ?? randomBytes(16).toString('base64url');
  const marker: LoginMarker = { at, client: params.client_id!, request: requestDigest(params), browser: digest(browser), id: randomBytes(12).toString('base64url') };
  back.searchParams.set(LOGIN_MARKER, seal(context.secret(), 'login', marker, at + MARKER_SECONDS));
  const login = new URL(context.loginUrl, issuer);
  login.searchParams.set('return_to', back.toString());
  const location = context.loginUrl.startsWith('/') ? `${login.pathname}${login.search}` : login.toString();
  const secure = back.protocol === 'https:' ? '; Secure' : '';
  const cookie = `${LOGIN_MARKER}=${browser}; Path=${back.pathname}; Max-Age=${MARKER_SECONDS}; HttpOnly; SameSite=Lax${secure}`;
  return { status: 302, headers: { location, 'cache-control': 'no-store', 'set-cookie': cookie }, body: '' };
}

/**
 * When the user comes back from the login page: the time the platform asked for the login, if
 * the marker fits this client, this request and this browser, and was not used before.
 */
export async function loginAskedAt(context: OAuthContext, request: PlatformRequest, params: Params): Promise<number | undefined> {
  const marker = unseal<LoginMarker>(context.secret(), 'login', params[LOGIN_MARKER], nowSeconds(context));
  if (!marker || marker.client !== params.client_id || marker.request !== requestDigest(params)) return undefined;
  const browser = browserId(request);
  if (browser === undefined || digest(browser) !== marker.browser) return undefined;
  return (await context.store.useOnce(`login:${marker.id}`, (marker.at + MARKER_SECONDS) * 1000)) ? marker.at : undefined;
}
