/**
 * The host's own login page: the platform sends users here with `return_to` when it needs a
 * signed-in user, and `authenticate(cookies)` reads the session this page starts. Failed attempts
 * are limited per address and user name, and per address, with the library's
 * `createLoginThrottle()`: a guesser slows only its own address (an IPv6 address's /56), never the
 * user's sign-in from an address that signed the user in before.
 */
import { createLoginThrottle, type OAuthStore, type OAuthUser } from 'courier-platform';
import { crossSiteRefusal, formFields, readForm, refused, type FormTokens } from './forms.js';
import { queryOf, redirect, type SiteAnswer, type SiteRequest } from './http.js';
import { escapeHtml, page } from './pages.js';
import { clearCookie, randomId, readCookie, setCookie, type Sessions } from './session.js';

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
  /** GET /login */
  form(request: SiteRequest): Promise<SiteAnswer>;
  /** POST /login */
  signIn(request: SiteRequest): Promise<SiteAnswer>;
  /** POST /logout */
  signOut(request: SiteRequest): Promise<SiteAnswer>;
  /** The signed-in user of a request's Cookie header, for the platform's `authenticate`. */
  authenticate(cookieHeader: string | undefined): Promise<OAuthUser | null>;
  /** "Signed in as … [Sign out]" or a sign-in link, for the host's pages. */
  status(cookieHeader: string | undefined): Promise<string>;
}

interface FormView {
  returnTo: string;
  username?: string;
  message?: string;
}

export function createLogin({ publicUrl, sessions, tokens, secure, store }: LoginOptions): Login {
  const throttle = createLoginThrottle({ store });
  const publicOrigin = new URL(publicUrl).origin;
  const preSessionCookie = (value: string) => setCookie(PRE_SESSION_COOKIE, value, { secure, path: '/login' });

  // Only come back to this site: an open redirect here would undo the platform's redirect_uri checks.
  // `return_to` is resolved as the browser will resolve the Location header (WHATWG URL), so
  // `//evil.example`, `/\evil.example`, `\\evil.example` and `javascript:` are judged by where they lead.
  const safeReturn = (value: string | null | undefined): string => {
    if (!value) return '/';
    let target: URL;
    try {
      target = new URL(value, `${publicUrl}/`);
    } catch {
      return '/';
    }
    return target.origin === publicOrigin ? target.href : '/';
  };

  const formPage = (request: SiteRequest, status: number, view: FormView, headers: Record<string, string> = {}): SiteAnswer => {
    const current = readCookie(request.header('cookie'), PRE_SESSION_COOKIE);
    const binding = current && PRE_SESSION_VALUE.test(current) ? current : randomId();
    const token = tokens.issue('login', binding);
    const message = view.message ? `<p class="error" role="alert">${escapeHtml(view.message)}</p>` : '';
    // A user name is kept after a failed attempt, so only the password needs typing again.
    const username = view.username ? ` value="${escapeHtml(view.username)}"` : ' autofocus';
    const password = view.username ? ' autofocus' : '';
    return page(
      status,
      'Sign in',
      `<h1>Sign in</h1>${message}<form method="post" action="/login">
<label>User name <input name="username" autocomplete="username" required${username}></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required${password}></label>
<input type="hidden" name="return_to" value="${escapeHtml(view.returnTo)}"><input type="hidden" name="csrf" value="${token}">
<button type="submit">Sign in</button></form><p class="muted">Demo account: <code>demo</code> / <code>demo</code></p>`,
      { narrow: true, headers, cookies: binding === current ? [] : [preSessionCookie(binding)] },
    );
  };

  const signIn = async (request: SiteRequest): Promise<SiteAnswer> => {
    const read = await readForm(request);
    if ('refusal' in read) return read.refusal;
    const fields = formFields(read.fields, ['username', 'password', 'return_to', 'csrf']);
    if (!fields) return formPage(request, 400, { returnTo: '/', message: 'The form came with a field more than once. Sign in again.' });
    const { username, password, csrf } = fields;
    const returnTo = safeReturn(fields.return_to);
    if (!tokens.verify('login', readCookie(request.header('cookie'), PRE_SESSION_COOKIE), csrf)) {
      return formPage(request, 403, { returnTo, username, message: 'This form expired or did not come from this page. Sign in again.' });
    }
    if (!username || !password) return formPage(request, 400, { returnTo, username, message: 'Enter your user name and password.' });
    // Counted before the password is checked, so a burst of guesses cannot get past the limit.
    // The host's client address: behind a proxy, configure the host to trust it
    // (docs/deployment.md#clientip), or every caller would share the proxy's count.
    // A store that cannot count (down, or busy under a flood) checks no password: 503, try again.
    const attempt = await throttle.attempt(username, request.ip).catch((error: unknown) => {
      console.warn('courier-platform example: the login throttle cannot count:', error instanceof Error ? error.message : error);
      return undefined;
    });
    if (!attempt) return formPage(request, 503, { returnTo, username, message: 'Signing in is unavailable for a moment; try again.' }, { 'retry-after': '1' });
    const wait = attempt.retryAfter;
    if (wait > 0) return formPage(request, 429, { returnTo, username, message: `Too many attempts; try again in ${wait} s.` }, { 'retry-after': String(wait) });
    if (username !== DEMO_USER.username || password !== DEMO_USER.password) {
      return formPage(request, 401, { returnTo, username, message: 'Wrong user name or password.' });
    }
    // After the right password only: it gives the attempt back and makes this address known to the
    // user, so a neighbour's guesses in its IPv6 /56 do not lock the user out of it.
    await attempt.succeeded();
    const session = await sessions.start(request.header('cookie'), { sub: DEMO_USER.claims.sub, auth_time: Math.floor(Date.now() / 1000) });
    return redirect(303, returnTo, [session, clearCookie(PRE_SESSION_COOKIE, secure, '/login')]);
  };

  const signOut = async (request: SiteRequest): Promise<SiteAnswer> => {
    const read = await readForm(request);
    if ('refusal' in read) return read.refusal;
    const fields = formFields(read.fields, ['csrf']);
    const cookies = request.header('cookie');
    const session = await sessions.current(cookies);
    if (session && !(fields && tokens.verify('logout', session.id, fields.csrf))) {
      return refused('This sign-out form expired or did not come from this site. Go back to the start page and sign out there.');
    }
    return redirect(303, '/', [await sessions.end(cookies)]);
  };

  /** Form posts from another site are refused before their body is read. */
  const sameSite =
    (handler: (request: SiteRequest) => Promise<SiteAnswer>) =>
    async (request: SiteRequest): Promise<SiteAnswer> =>
      crossSiteRefusal(request, publicOrigin) ?? handler(request);

  return {
    form: async (request) => formPage(request, 200, { returnTo: safeReturn(queryOf(request).get('return_to')) }),
    signIn: sameSite(signIn),
    signOut: sameSite(signOut),
    async authenticate(cookieHeader) {
      const session = await sessions.current(cookieHeader);
      return session?.data.sub === DEMO_USER.claims.sub ? { ...DEMO_USER.claims, auth_time: session.data.auth_time } : null;
    },
    async status(cookieHeader) {
      const session = await sessions.current(cookieHeader);
      if (session?.data.sub !== DEMO_USER.claims.sub) return '<p class="muted">Not signed in. <a href="/login">Sign in</a> (demo / demo).</p>';
      return `<form method="post" action="/logout" class="inline muted">Signed in as ${escapeHtml(DEMO_USER.claims.name)}.
<input type="hidden" name="csrf" value="${tokens.issue('logout', session.id)}"><button type="submit">Sign out</button></form>`;
    },
  };
}
