/**
 * The demo's sessions: HMAC-signed cookies, so any number of example processes behind one
 * PUBLIC_URL share them without a session store. A real host uses its own session mechanism;
 * the platform only ever calls `authenticate(req)`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

export function signedCookies(secret: string) {
  const mac = (body: string) => createHmac('sha256', secret).update(body).digest('base64url');
  return {
    set(res: Response, name: string, value: object, maxAgeSeconds: number) {
      const body = Buffer.from(JSON.stringify({ ...value, exp: Math.floor(Date.now() / 1000) + maxAgeSeconds })).toString('base64url');
      res.cookie(name, `${body}.${mac(body)}`, { httpOnly: true, sameSite: 'lax', maxAge: maxAgeSeconds * 1000, path: '/' });
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
      res.clearCookie(name, { path: '/' });
    },
  };
}

export type SignedCookies = ReturnType<typeof signedCookies>;
