/**
 * The demo's cookies. Sign-in sessions are a random id in an HttpOnly cookie with the session
 * itself kept server-side (see session-store.ts), so signing out ends it for real: the old cookie
 * signs nobody in afterwards. The relying party's short-lived state rides in an HMAC-signed
 * cookie instead. A real host uses its own session mechanism; the platform only ever calls
 * `authenticate(req)`.
 */
import { Buffer } from 'node:buffer';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SessionData, SessionStore } from './session-store.js';

/** A cookie's value from a Cookie header. */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // a malformed cookie is no cookie
      }
    }
  }
  return undefined;
}

/**
 * A Set-Cookie line (RFC 6265 section 4.1): HttpOnly, and Secure on https. SameSite=Lax: the
 * browser sends the cookie when the user follows a link or redirect from another site to the
 * authorization endpoint, never with another site's form POST. `maxAge` 0 clears the cookie.
 */
export function setCookie(name: string, value: string, { secure, path = '/', maxAge }: { secure: boolean; path?: string; maxAge?: number }): string {
  const lifetime =
    maxAge === undefined ? '' : maxAge === 0 ? '; Expires=Thu, 01 Jan 1970 00:00:00 GMT' : `; Max-Age=${maxAge}; Expires=${new Date(Date.now() + maxAge * 1000).toUTCString()}`;
  return `${name}=${encodeURIComponent(value)}; Path=${path}${lifetime}; HttpOnly${secure ? '; Secure' : ''}; SameSite=Lax`;
}

export const clearCookie = (name: string, secure: boolean, path = '/') => setCookie(name, '', { secure, path, maxAge: 0 });

export function signedCookies(secret: string, secure: boolean) {
  const mac = (body: string) => createHmac('sha256', secret).update(body).digest('base64url');
  return {
    /** The Set-Cookie line carrying `value` for `maxAgeSeconds`. */
    set(name: string, value: object, maxAgeSeconds: number): string {
      const body = Buffer.from(JSON.stringify({ ...value, exp: Math.floor(Date.now() / 1000) + maxAgeSeconds })).toString('base64url');
      return setCookie(name, `${body}.${mac(body)}`, { secure, maxAge: maxAgeSeconds });
    },
    get<T>(cookieHeader: string | undefined, name: string): T | undefined {
      const raw = readCookie(cookieHeader, name);
      const dot = raw?.lastIndexOf('.') ?? -1;
      if (!raw || dot <= 0) return undefined;
      const body = raw.slice(0, dot);
      const given = Buffer.from(raw.slice(dot + 1));
      const expected = Buffer.from(mac(body));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T & { exp: number };
      return value.exp >= Date.now() / 1000 ? value : undefined;
    },
    clear: (name: string) => clearCookie(name, secure),
  };
}

export type SignedCookies = ReturnType<typeof signedCookies>;

const SESSION_COOKIE = 'demo_session';
const SESSION_SECONDS = 8 * 3600;

/** A fresh random value for a cookie: 256 bits, URL-safe. */
export const randomId = () => randomBytes(32).toString('base64url');

export function createSessions(store: SessionStore, secure: boolean) {
  return {
    /** Signs the browser in with a new session id (never one the browser brought: no fixation); answers its Set-Cookie line. */
    async start(cookieHeader: string | undefined, data: SessionData): Promise<string> {
      const previous = readCookie(cookieHeader, SESSION_COOKIE);
      if (previous) await store.delete(previous);
      const id = randomId();
      await store.set(id, data, SESSION_SECONDS);
      return setCookie(SESSION_COOKIE, id, { secure, maxAge: SESSION_SECONDS });
    },
    /** The session of this request with its id, or undefined when signed out. */
    async current(cookieHeader: string | undefined): Promise<{ id: string; data: SessionData } | undefined> {
      const id = readCookie(cookieHeader, SESSION_COOKIE);
      const data = id ? await store.get(id) : undefined;
      return id && data ? { id, data } : undefined;
    },
    /** Deletes the session from the store, so a kept copy of the cookie is worthless; answers the Set-Cookie line clearing it. */
    async end(cookieHeader: string | undefined): Promise<string> {
      const id = readCookie(cookieHeader, SESSION_COOKIE);
      if (id) await store.delete(id);
      return clearCookie(SESSION_COOKIE, secure);
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
