/**
 * How the host accepts its own HTML forms (sign-in, sign-out), against cross-site request
 * forgery and malformed input:
 * - the browser says where a POST comes from (Origin, or Sec-Fetch-Site when Origin is withheld),
 *   and another site is refused;
 * - each form carries a token, an HMAC of a random value held in an HttpOnly cookie, which another
 *   site can neither read nor compute (the signed double-submit cookie of the OWASP CSRF
 *   prevention cheat sheet);
 * - the cookies are SameSite=Lax, so a browser leaves them off another site's POST anyway;
 * - only `application/x-www-form-urlencoded` in UTF-8 up to 8 KB and 20 fields is read, each
 *   field at most once.
 * The body is read here, not by a framework's parser, so every host refuses the same forms alike.
 */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SiteAnswer, SiteRequest } from './http.js';
import { clientErrorPage, escapeHtml, page } from './pages.js';

const FORM_LIMIT = 8 * 1024;
const FIELD_LIMIT = 20;

/** The 403 page for a form that fails the checks below. */
export function refused(reason: string): SiteAnswer {
  return page(403, 'Request refused', `<h1>Request refused</h1><p>${escapeHtml(reason)}</p><p><a href="/">Back to the start page</a></p>`);
}

/** The refusal of a POST that the browser reports as coming from another site, or undefined. */
export function crossSiteRefusal(request: SiteRequest, publicOrigin: string): SiteAnswer | undefined {
  const origin = request.header('origin');
  const site = request.header('sec-fetch-site');
  // Under `Referrer-Policy: no-referrer` (every page here) browsers send `Origin: null` with a
  // form POST, even from this site; Sec-Fetch-Site still tells. A client that sends neither is
  // not a browser another site can drive, and still needs the form token.
  const crossSite =
    origin !== undefined && origin !== 'null' ? origin !== publicOrigin : site !== undefined && site !== 'same-origin' && site !== 'none';
  return crossSite ? refused(`This form was sent from another site. Open this site at ${publicOrigin} and send it from there.`) : undefined;
}

const UNSUPPORTED = page(
  415,
  'Unsupported form',
  '<h1>Unsupported form</h1><p>This address accepts only an HTML form (<code>application/x-www-form-urlencoded</code>).</p>',
);

/** The body's bytes, or undefined once it grows past `limit` (the rest is left unread). */
async function readLimited(body: AsyncIterable<Uint8Array> | null, limit: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * An HTML form's fields; a field sent more than once is an array, which `formFields` refuses.
 * Anything but a form in UTF-8 is a 415 page, a body over 8 KB or 20 fields a 413 page.
 */
export async function readForm(request: SiteRequest): Promise<{ fields: Record<string, string | string[]> } | { refusal: SiteAnswer }> {
  const [type = '', ...parameters] = (request.header('content-type') ?? '').split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/x-www-form-urlencoded') return { refusal: UNSUPPORTED };
  const charset = parameters.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return { refusal: clientErrorPage(415) };
  const bytes = await readLimited(request.body, FORM_LIMIT);
  if (!bytes) return { refusal: clientErrorPage(413) };
  const params = new URLSearchParams(new TextDecoder().decode(bytes));
  const fields: Record<string, string | string[]> = {};
  let count = 0;
  for (const [name, value] of params) {
    if (++count > FIELD_LIMIT) return { refusal: clientErrorPage(413) };
    const seen = fields[name];
    fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return { fields };
}

/**
 * The named fields of a parsed form as strings ('' when absent), or undefined when one of them
 * came more than once: a repeated field is a forged or broken form, not a value to pick from.
 */
export function formFields<Name extends string>(body: Record<string, unknown>, names: readonly Name[]): Record<Name, string> | undefined {
  const fields = {} as Record<Name, string>;
  for (const name of names) {
    const value = body[name] ?? '';
    if (typeof value !== 'string') return undefined;
    fields[name] = value;
  }
  return fields;
}

/** Form tokens bound to a cookie value, one kind per form (`purpose`). */
export function formTokens(secret: string) {
  const issue = (purpose: string, binding: string) => createHmac('sha256', secret).update(`${purpose}\n${binding}`).digest('base64url');
  return {
    issue,
    verify(purpose: string, binding: string | undefined, token: string): boolean {
      if (!binding) return false;
      const expected = Buffer.from(issue(purpose, binding));
      const given = Buffer.from(token);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type FormTokens = ReturnType<typeof formTokens>;
