/**
 * How the host accepts its own HTML forms (sign-in, sign-out), against cross-site request
 * forgery and malformed input:
 * - the browser says where a POST comes from (Origin, or Sec-Fetch-Site when Origin is withheld),
 *   and another site is refused;
 * - each form carries a token, an HMAC of a random value held in an HttpOnly cookie, which another
 *   site can neither read nor compute (the signed double-submit cookie of the OWASP CSRF
 *   prevention cheat sheet);
 * - the cookies are SameSite=Lax, so a browser leaves them off another site's POST anyway;
 * - only `application/x-www-form-urlencoded` up to 8 KB is read, and each field at most once.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import express, { type RequestHandler, type Response } from 'express';
import { escapeHtml, sendPage } from './pages.js';

/** The 403 page for a form that fails the checks below. */
export function refused(res: Response, reason: string): void {
  sendPage(res, 403, 'Request refused', `<h1>Request refused</h1><p>${escapeHtml(reason)}</p><p><a href="/">Back to the start page</a></p>`);
}

/** Refuses a POST that the browser reports as coming from another site. */
export function sameOriginOnly(publicOrigin: string): RequestHandler {
  return (req, res, next) => {
    const origin = req.get('origin');
    const site = req.get('sec-fetch-site');
    // Under `Referrer-Policy: no-referrer` (every page here) browsers send `Origin: null` with a
    // form POST, even from this site; Sec-Fetch-Site still tells. A client that sends neither is
    // not a browser another site can drive, and still needs the form token.
    const crossSite =
      origin !== undefined && origin !== 'null' ? origin !== publicOrigin : site !== undefined && site !== 'same-origin' && site !== 'none';
    if (crossSite) {
      refused(res, `This form was sent from another site. Open this site at ${publicOrigin} and send it from there.`);
      return;
    }
    next();
  };
}

/** Reads an HTML form's body; anything else is a 415 page, and a body over 8 KB a 413 page. */
export const formBody: RequestHandler[] = [
  (req, res, next) => {
    if (req.is('application/x-www-form-urlencoded')) {
      next();
      return;
    }
    sendPage(res, 415, 'Unsupported form', '<h1>Unsupported form</h1><p>This address accepts only an HTML form (<code>application/x-www-form-urlencoded</code>).</p>');
  },
  express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }),
];

/**
 * The named fields of a parsed form as strings ('' when absent), or undefined when one of them
 * came more than once: a repeated field is a forged or broken form, not a value to pick from.
 */
export function formFields<Name extends string>(body: unknown, names: readonly Name[]): Record<Name, string> | undefined {
  const form = (body ?? {}) as Record<string, unknown>;
  const fields = {} as Record<Name, string>;
  for (const name of names) {
    const value = form[name] ?? '';
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
