/**
 * The host's own login page: the platform sends users here with `return_to` when it needs a
 * signed-in user, and `authenticate(req)` reads the session this page starts. Failed attempts
 * are limited per address and user name, and per address, with the library's
 * `createLoginThrottle()`: a guesser slows only its own address, never the user's sign-in.
 */
import express, { type Request, type Response, type Router } from 'express';
import { createLoginThrottle, type OAuthStore, type OAuthUser } from 'courier-platform';
import { formBody, formFields, refused, sameOriginOnly, type FormTokens } from './forms.js';
import { escapeHtml, sendPage } from './pages.js';
import { cookieOptions, randomId, readCookie, type Sessions } from './session.js';

const DEMO_USER = {
  username: 'demo',
  password: 'demo',
  claims: { sub: 'demo-user-1', name: 'Demo User', preferred_username: 'demo', email: 'demo@example.com', email_verified: true },
};
/** The random value the sign-in form's token is bound to, set before anyone is signed in. */
const PRE_SESSION_COOKIE = 'login_form';
const PRE_SESSION_VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface LoginOptions {
  publicUrl: string;
  sessions: Sessions;
  tokens: FormTokens;
  /** Cookies get the Secure flag (PUBLIC_URL is https). */
  secure: boolean;
  /** The platform's OAuth store: on Redis or PostgreSQL, every process shares one budget of failed logins. */
  store: OAuthStore;
}

export interface Login {
  router: Router;
  authenticate(req: Request): Promise<OAuthUser | null>;
  /** "Signed in as … [Sign out]" or a sign-in link, for the host's pages. */
  status(req: Request): Promise<string>;
}

export function loginRoutes({ publicUrl, sessions, tokens, secure, store }: LoginOptions): Login {
  const throttle = createLoginThrottle({ store });
  const router = express.Router();
  const publicOrigin = new URL(publicUrl).origin;

  // Only come back to this site: an open redirect here would undo the platform's redirect_uri checks.
  // `return_to` is resolved as the browser will resolve the Location header (WHATWG URL), so
  // `//evil.example`, `/\evil.example`, `\\evil.example` and `javascript:` are judged by where they lead.
  const safeReturn = (value: unknown): string => {
    if (typeof value !== 'string' || value === '') return '/';
    let target: URL;
    try {
      target = new URL(value, `${publicUrl}/`);
    } catch {
      return '/';
    }
    return target.origin === publicOrigin ? target.href : '/';
  };

  const preSession = (req: Request, res: Response): string => {
    const current = readCookie(req, PRE_SESSION_COOKIE);
    if (current && PRE_SESSION_VALUE.test(current)) return current;
    const value = randomId();
    res.cookie(PRE_SESSION_COOKIE, value, cookieOptions(secure, '/login'));
    return value;
  };

  const form = (req: Request, res: Response, status: number, view: { returnTo: string; username?: string; message?: string }) => {
    const token = tokens.issue('login', preSession(req, res));
    const message = view.message ? `<p class="error" role="alert">${escapeHtml(view.message)}</p>` : '';
    // A user name is kept after a failed attempt, so only the password needs typing again.
    const username = view.username ? ` value="${escapeHtml(view.username)}"` : ' autofocus';
    const password = view.username ? ' autofocus' : '';
    sendPage(
      res,
      status,
      'Sign in',
      `<h1>Sign in</h1>${message}<form method="post" action="/login">
<label>User name <input name="username" autocomplete="username" required${username}></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required${password}></label>
<input type="hidden" name="return_to" value="${escapeHtml(view.returnTo)}"><input type="hidden" name="csrf" value="${token}">
<button type="submit">Sign in</button></form><p class="muted">Demo account: <code>demo</code> / <code>demo</code></p>`,
      { narrow: true },
    );
  };

  router.get('/login', (req, res) => {
    form(req, res, 200, { returnTo: safeReturn(req.query.return_to) });
  });

  router.post('/login', sameOriginOnly(publicOrigin), ...formBody, async (req, res) => {
    const fields = formFields(req.body, ['username', 'password', 'return_to', 'csrf']);
    if (!fields) {
      form(req, res, 400, { returnTo: '/', message: 'The form came with a field more than once. Sign in again.' });
      return;
    }
    const { username, password, csrf } = fields;
    const returnTo = safeReturn(fields.return_to);
    if (!tokens.verify('login', readCookie(req, PRE_SESSION_COOKIE), csrf)) {
      form(req, res, 403, { returnTo, username, message: 'This form expired or did not come from this page. Sign in again.' });
      return;
    }
    if (!username || !password) {
      form(req, res, 400, { returnTo, username, message: 'Enter your user name and password.' });
      return;
    }
    // Express's client address (docs/deployment.md#clientip): behind a proxy, set 'trust proxy',
    // or every caller would share the proxy's count.
    const ip = req.ip ?? 'unknown';
    // Counted before the password is checked, so a burst of guesses cannot get past the limit.
    const attempt = await throttle.attempt(username, ip);
    const wait = attempt.retryAfter;
    if (wait > 0) {
      res.set('retry-after', String(wait));
      form(req, res, 429, { returnTo, username, message: `Too many attempts; try again in ${wait} s.` });
      return;
    }
    if (username !== DEMO_USER.username || password !== DEMO_USER.password) {
      form(req, res, 401, { returnTo, username, message: 'Wrong user name or password.' });
      return;
    }
    await attempt.succeeded();
    await sessions.start(req, res, { sub: DEMO_USER.claims.sub, auth_time: Math.floor(Date.now() / 1000) });
    res.clearCookie(PRE_SESSION_COOKIE, cookieOptions(secure, '/login'));
    res.redirect(303, returnTo);
  });

  router.post('/logout', sameOriginOnly(publicOrigin), ...formBody, async (req, res) => {
    const fields = formFields(req.body, ['csrf']);
    const session = await sessions.current(req);
    if (session && !(fields && tokens.verify('logout', session.id, fields.csrf))) {
      refused(res, 'This sign-out form expired or did not come from this site. Go back to the start page and sign out there.');
      return;
    }
    await sessions.end(req, res);
    res.redirect(303, '/');
  });

  const authenticate = async (req: Request): Promise<OAuthUser | null> => {
    const session = await sessions.current(req);
    return session?.data.sub === DEMO_USER.claims.sub ? { ...DEMO_USER.claims, auth_time: session.data.auth_time } : null;
  };

  const status = async (req: Request): Promise<string> => {
    const session = await sessions.current(req);
    if (session?.data.sub !== DEMO_USER.claims.sub) return '<p class="muted">Not signed in. <a href="/login">Sign in</a> (demo / demo).</p>';
    return `<form method="post" action="/logout" class="inline muted">Signed in as ${escapeHtml(DEMO_USER.claims.name)}.
<input type="hidden" name="csrf" value="${tokens.issue('logout', session.id)}"><button type="submit">Sign out</button></form>`;
  };

  return { router, authenticate, status };
}
