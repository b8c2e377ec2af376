/**
 * The host's own login page: the platform sends users here with `return_to` when it needs a
 * signed-in user, and `authenticate(req)` reads the session this page sets.
 */
import express, { type Request, type Router } from 'express';
import { createLoginThrottle, type OAuthUser } from 'courier-platform';
import type { SignedCookies } from './session.js';

const DEMO_USER = {
  username: 'demo',
  password: 'demo',
  claims: { sub: 'demo-user-1', name: 'Demo User', preferred_username: 'demo', email: 'demo@example.com', email_verified: true },
};
const SESSION_COOKIE = 'demo_session';
const SESSION_SECONDS = 8 * 3600;

interface Session {
  sub: string;
  auth_time: number;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function loginRoutes(cookies: SignedCookies, publicUrl: string): { router: Router; authenticate: (req: Request) => OAuthUser | null } {
  const throttle = createLoginThrottle();
  const router = express.Router();

  // Only come back to this site: an open redirect here would undo the platform's redirect_uri checks.
  const safeReturn = (value: unknown) =>
    typeof value === 'string' && (value.startsWith(`${publicUrl}/`) || (value.startsWith('/') && !value.startsWith('//'))) ? value : '/';

  const page = (returnTo: string, message = '') => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title>
<style>body{font-family:system-ui,sans-serif;display:flex;justify-content:center;margin-top:10vh}form{display:grid;gap:.6rem;width:18rem}input,button{font-size:1rem;padding:.5rem}.error{color:#b00020}</style></head>
<body><form method="post" action="/login"><h1>Sign in</h1>${message ? `<p class="error">${escape(message)}</p>` : ''}
<label>User name <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<input type="hidden" name="return_to" value="${escape(returnTo)}"><button type="submit">Sign in</button>
<p>Demo account: <code>demo</code> / <code>demo</code></p></form></body></html>`;

  router.get('/login', (req, res) => {
    res.type('html').send(page(safeReturn(req.query.return_to)));
  });

  router.post('/login', express.urlencoded({ extended: false, limit: '8kb' }), async (req, res) => {
    const { username = '', password = '', return_to: returnTo } = req.body as Record<string, string | undefined>;
    const ip = req.socket.remoteAddress ?? 'unknown';
    const attempt = await throttle.attempt(username, ip);
    if (attempt.retryAfter > 0) {
      const wait = attempt.retryAfter;
      res.status(429).set('retry-after', String(wait)).type('html').send(page(safeReturn(returnTo), `Too many attempts; try again in ${wait} s.`));
      return;
    }
    if (username !== DEMO_USER.username || password !== DEMO_USER.password) {
      res.status(401).type('html').send(page(safeReturn(returnTo), 'Wrong user name or password.'));
      return;
    }
    await attempt.succeeded();
    cookies.set(res, SESSION_COOKIE, { sub: DEMO_USER.claims.sub, auth_time: Math.floor(Date.now() / 1000) } satisfies Session, SESSION_SECONDS);
    res.redirect(303, safeReturn(returnTo));
  });

  router.post('/logout', (_req, res) => {
    cookies.clear(res, SESSION_COOKIE);
    res.redirect(303, '/');
  });

  const authenticate = (req: Request): OAuthUser | null => {
    const session = cookies.get<Session>(req, SESSION_COOKIE);
    return session?.sub === DEMO_USER.claims.sub ? { ...DEMO_USER.claims, auth_time: session.auth_time } : null;
  };
  return { router, authenticate };
}
