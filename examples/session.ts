/**
 * The demo's cookies. Sign-in sessions are a random id in an HttpOnly cookie with the session
 * itself kept server-side (see session-store.ts), so signing out ends it for real: the old cookie
 * signs nobody in afterwards. The relying party's short-lived state rides in an HMAC-signed
 * cookie instead. A real host uses its own session mechanism; the platform only ever calls
 * `authenticate(req)`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CookieOptions, Request, Response } from 'express';
import type { SessionData, SessionStore } from './session-store.js';

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
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
 * HttpOnly, and Secure on https. SameSite=Lax: the browser sends the cookie when the user follows
 * a link or redirect from another site to the authorization endpoint, never with another
 * site's form POST.
 */
export function cookieOptions(secure: boolean, path = '/'): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure, path };
}

export function signedCookies(secret: string, secure: boolean) {
  const mac = (body: string) => createHmac('sha256', secret).update(body).digest('base64url');
  return {
    set(res: Response, name: string, value: object, maxAgeSeconds: number) {
      const body = Buffer.from(JSON.stringify({ ...value, exp: Math.floor(Date.now() / 1000) + maxAgeSeconds })).toString('base64url');
      res.cookie(name, `${body}.${mac(body)}`, { ...cookieOptions(secure), maxAge: maxAgeSeconds * 1000 });
    },
    get<T>(req: Request, name: string): T | undefined {
      const raw = readCookie(req, name);
      const dot = raw?.lastIndexOf('.') ?? -1;
      if (!raw || dot <= 0) return undefined;
      const body = raw.slice(0, dot);
      const given = Buffer.from(raw.slice(dot + 1));
      const expected = Buffer.from(mac(body));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T & { exp: number };
      return value.exp >= Date.now() / 1000 ? value : undefined;
    },
    clear(res: Response, name: string) {
      res.clearCookie(name, cookieOptions(secure));
    },
  };
}

export type SignedCookies = ReturnType<typeof signedCookies>;

const SESSION_COOKIE = 'demo_session';
const SESSION_SECONDS = 8 * 3600;

/** A fresh random value for a cookie: 256 bits, URL-safe. */
export const randomId = () => randomBytes(32).toString('base64url');

export function createSessions(store: SessionStore, secure: boolean) {
  return {
    /** Signs the browser in with a new session id (never one the browser brought: no fixation). */
    async start(req: Request, res: Response, data: SessionData): Promise<void> {
      const previous = readCookie(req, SESSION_COOKIE);
      if (previous) await store.delete(previous);
      const id = randomId();
      await store.set(id, data, SESSION_SECONDS);
      res.cookie(SESSION_COOKIE, id, { ...cookieOptions(secure), maxAge: SESSION_SECONDS * 1000 });
    },
    /** The session of this request with its id, or undefined when signed out. */
    async current(req: Request): Promise<{ id: string; data: SessionData } | undefined> {
      const id = readCookie(req, SESSION_COOKIE);
      const data = id ? await store.get(id) : undefined;
      return id && data ? { id, data } : undefined;
    },
    /** Deletes the session from the store, so a kept copy of the cookie is worthless. */
    async end(req: Request, res: Response): Promise<void> {
      const id = readCookie(req, SESSION_COOKIE);
      if (id) await store.delete(id);
      res.clearCookie(SESSION_COOKIE, cookieOptions(secure));
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
