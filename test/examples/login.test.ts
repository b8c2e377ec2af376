/**
 * The example host's login page, driven over HTTP as a browser would: forged and malformed posts
 * are refused with a plain page, every page sends the consent page's security headers, sign-out
 * ends the session on the server, and a failed attempt keeps the typed user name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postFormFrom } from '../support/from-address.js';
import { STACK_TRACE, Visitor, expectSecurityHeaders, hiddenInput, signIn, startExample, type Page, type RunningExample } from './support.js';

/** The authorization request a relying party sends; the platform answers it only for a signed-in user. */
const AUTHORIZE = '/oauth/authorize?response_type=code&client_id=demo-client&scope=openid&state=s1&code_challenge_method=S256' +
  `&code_challenge=${'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'}&redirect_uri=`;

/** Whether the platform treats this visitor as signed in: it shows the consent page instead of sending to /login. */
async function platformSeesSignedIn(visitor: Visitor): Promise<boolean> {
  const page = await visitor.request(`${AUTHORIZE}${encodeURIComponent(`${visitor.base}/callback`)}`);
  expect([200, 302], page.text.slice(0, 300)).toContain(page.status);
  return !(page.status === 302 && page.location?.pathname === '/login');
}

function expectPlainErrorPage(page: Page, status: number): void {
  expect(page.status, page.text.slice(0, 300)).toBe(status);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.text).toMatch(/^<!doctype html>/);
  expect(page.text).not.toMatch(STACK_TRACE);
  expectSecurityHeaders(page.headers);
}

describe('the example login page', () => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startExample();
  });
  afterAll(() => example?.close());

  it('sends the consent page security headers on every page of the host', async () => {
    const visitor = new Visitor(example.base);
    for (const path of ['/', '/login', '/callback', '/no-such-page']) {
      const page = await visitor.request(path);
      expect(page.headers.get('content-type'), path).toMatch(/^text\/html/);
      expectSecurityHeaders(page.headers);
      expect(page.headers.get('cache-control'), path).toBe('no-store');
    }
    expect((await visitor.request('/no-such-page')).status).toBe(404);
  });

  it('sets the form cookie HttpOnly and SameSite=Lax and binds the form token to it', async () => {
    const visitor = new Visitor(example.base);
    const page = await visitor.request('/login');
    expect(page.headers.getSetCookie().join('\n')).toMatch(/^login_form=[^;]+;.*HttpOnly.*SameSite=Lax/im);
    expect(hiddenInput(page.text, 'csrf')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('accepts its own form whether the browser sends Origin or withholds it', async () => {
    const variants: Record<string, string>[] = [{ origin: 'null', 'sec-fetch-site': 'same-origin' }, { origin: example.base }, {}];
    for (const headers of variants) {
      const visitor = new Visitor(example.base);
      const token = hiddenInput((await visitor.open('/login')).text, 'csrf')!;
      const page = await visitor.request('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ username: 'demo', password: 'demo', csrf: token }).toString(),
      });
      expect(page.status, JSON.stringify(headers)).toBe(303);
    }
  });

  it('signs in with the form token and redirects to return_to', async () => {
    const visitor = new Visitor(example.base);
    const page = await signIn(visitor, 'demo', 'demo', '/oauth/authorize?x=1');
    expect(page.status).toBe(303);
    expect(page.location?.href).toBe(`${example.base}/oauth/authorize?x=1`);
    expect(page.headers.getSetCookie().join('\n')).toMatch(/^demo_session=[^;]+;.*HttpOnly.*SameSite=Lax/im);
    expect(await platformSeesSignedIn(visitor)).toBe(true);
  });

  it('follows a return_to that stays on this site, absolute or relative', async () => {
    for (const [returnTo, expected] of [
      [`${example.base}/callback?x=1`, `${example.base}/callback?x=1`],
      ['oauth/authorize?y=2', `${example.base}/oauth/authorize?y=2`],
      ['/%5C%5Cevil.example/', `${example.base}/%5C%5Cevil.example/`],
    ]) {
      const page = await signIn(new Visitor(example.base), 'demo', 'demo', returnTo);
      expect([returnTo, page.status, page.location?.href]).toEqual([returnTo, 303, expected]);
    }
  });

  it('sends to the start page instead of a return_to that leaves this site, as a browser would read it', async () => {
    const elsewhere = [
      '/\\evil.example/',
      '//evil.example/',
      '\\\\evil.example/',
      '/\t/evil.example/',
      '\\/evil.example',
      'https://evil.example/',
      'https:evil.example',
      `${example.base}.evil.example/`,
      `${example.base}@evil.example/`,
      'javascript:alert(document.domain)',
      ' javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'http://[::1',
    ];
    for (const returnTo of elsewhere) {
      const visitor = new Visitor(example.base);
      const form = await visitor.open(`/login?return_to=${encodeURIComponent(returnTo)}`);
      expect([returnTo, hiddenInput(form.text, 'return_to')]).toEqual([returnTo, '/']);
      const page = await signIn(visitor, 'demo', 'demo', returnTo);
      expect([returnTo, page.status, page.location?.href]).toEqual([returnTo, 303, `${example.base}/`]);
    }
  });

  describe('refuses a login from another site (login CSRF)', () => {
    it('answers 403 to a cross-site form post carrying no token, even with the victim cookies', async () => {
      const victim = new Visitor(example.base);
      await victim.open('/login'); // the victim has the form cookie
      const page = await victim.submit('/login', { username: 'demo', password: 'demo' }, { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' });
      expectPlainErrorPage(page, 403);
      expect(page.text).toContain('sent from another site');
      expect(await platformSeesSignedIn(victim)).toBe(false);
    });

    it('answers 403 to a cross-site post carrying a token the attacker got from this site', async () => {
      const attacker = new Visitor(example.base);
      const token = hiddenInput((await attacker.open('/login')).text, 'csrf')!;
      const victim = new Visitor(example.base);
      await victim.open('/login');
      const page = await victim.submit('/login', { username: 'demo', password: 'demo', csrf: token }, { origin: 'null', 'sec-fetch-site': 'cross-site' });
      expectPlainErrorPage(page, 403);
      expect(await platformSeesSignedIn(victim)).toBe(false);
    });

    it('answers 403 when only Sec-Fetch-Site tells the post is cross-site', async () => {
      const victim = new Visitor(example.base);
      const token = hiddenInput((await victim.open('/login')).text, 'csrf')!;
      const page = await victim.request('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
        body: new URLSearchParams({ username: 'demo', password: 'demo', csrf: token }).toString(),
      });
      expectPlainErrorPage(page, 403);
    });

    it('answers 403 with a fresh form, user name kept, to a token bound to another cookie or none', async () => {
      const attacker = new Visitor(example.base);
      const foreignToken = hiddenInput((await attacker.open('/login')).text, 'csrf')!;
      const victim = new Visitor(example.base);
      await victim.open('/login');
      for (const csrf of [foreignToken, '']) {
        const page = await victim.submit('/login', { username: 'demo', password: 'demo', csrf });
        expectPlainErrorPage(page, 403);
        expect(page.text).toContain('value="demo"');
        expect(hiddenInput(page.text, 'csrf')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      }
      expect(await platformSeesSignedIn(victim)).toBe(false);
    });
  });

  describe('answers bad input with a plain 4xx page, never a stack trace', () => {
    it('400 for a repeated user name', async () => {
      const visitor = new Visitor(example.base);
      const token = hiddenInput((await visitor.open('/login')).text, 'csrf')!;
      const fields = new URLSearchParams([['username', 'demo'], ['username', 'other'], ['password', 'demo'], ['csrf', token]]);
      const page = await visitor.submit('/login', fields);
      expectPlainErrorPage(page, 400);
      expect(page.text).toContain('more than once');
      expect(await platformSeesSignedIn(visitor)).toBe(false);
    });

    it('415 for a JSON body and for other content types', async () => {
      const visitor = new Visitor(example.base);
      await visitor.open('/login');
      for (const [type, body] of [
        ['application/json', '{"username":"demo","password":"demo"}'],
        ['text/plain', 'username=demo&password=demo'],
        ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="username"\r\n\r\ndemo\r\n--x--\r\n'],
      ] as const) {
        const page = await visitor.request('/login', { method: 'POST', headers: { 'content-type': type, origin: example.base }, body });
        expectPlainErrorPage(page, 415);
      }
    });

    it('415 for a form in a charset the parser does not read', async () => {
      const visitor = new Visitor(example.base);
      const page = await visitor.request('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=koi8-r', origin: example.base },
        body: 'username=demo',
      });
      expectPlainErrorPage(page, 415);
    });

    it('413 for a 9 KB form', async () => {
      const visitor = new Visitor(example.base);
      await visitor.open('/login');
      const page = await visitor.submit('/login', { username: 'demo', password: 'x'.repeat(9 * 1024) });
      expectPlainErrorPage(page, 413);
    });
  });

  it('keeps the typed user name (escaped) after a wrong password', async () => {
    const visitor = new Visitor(example.base);
    const page = await signIn(visitor, 'demo', 'wrong');
    expect(page.status).toBe(401);
    expect(page.text).toContain('Wrong user name or password.');
    expect(page.text).toMatch(/<input name="username"[^>]* value="demo">/);
    expect(page.text).not.toContain('wrong');

    const odd = await signIn(visitor, '"><script>x</script>', 'wrong');
    expect(odd.text).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
    expect(odd.text).not.toContain('<script>');
  });

  it('ends the session on sign-out: a kept copy of the cookie no longer signs in', async () => {
    const visitor = new Visitor(example.base);
    expect((await signIn(visitor)).status).toBe(303);
    const home = await visitor.open('/');
    expect(home.text).toContain('Signed in as Demo User');
    const kept = new Visitor(example.base);
    kept.cookies.set('demo_session', visitor.cookies.get('demo_session')!);
    expect(await platformSeesSignedIn(kept)).toBe(true);

    const out = await visitor.submit('/logout', { csrf: hiddenInput(home.text, 'csrf')! });
    expect(out.status).toBe(303);
    expect(visitor.cookies.has('demo_session')).toBe(false);

    expect(await platformSeesSignedIn(kept)).toBe(false);
    expect((await kept.open('/')).text).toContain('Not signed in');
  });

  it('refuses a sign-out without its token and stays signed in', async () => {
    const visitor = new Visitor(example.base);
    await signIn(visitor);
    for (const [fields, headers] of [
      [{}, {}],
      [{ csrf: 'forged' }, {}],
      [{}, { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' }],
    ] as const) {
      expectPlainErrorPage(await visitor.submit('/logout', fields, headers), 403);
    }
    expect(await platformSeesSignedIn(visitor)).toBe(true);
  });
});

describe('the example login throttle', () => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startExample();
  });
  afterAll(() => example?.close());

  it('answers 429 with Retry-After after 5 failures, keeping the user name', async () => {
    const visitor = new Visitor(example.base);
    for (let i = 0; i < 5; i++) expect((await signIn(visitor, 'demo', `wrong${i}`)).status).toBe(401);
    const page = await signIn(visitor, 'demo', 'demo');
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(page.text).toContain('Too many attempts');
    expect(page.text).toContain('value="demo"');
    expect(await platformSeesSignedIn(visitor)).toBe(false);
  });

});

describe('the example login throttle counts per address', () => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startExample();
  });
  afterAll(() => example?.close());

  it('wrong passwords for demo from 127.0.0.9 slow that address and do not stop demo/demo from 127.0.0.1', async () => {
    // The guesser fetches its form like anyone (a GET counts nothing), then posts from its own address.
    const guesser = new Visitor(example.base);
    const form = await guesser.open('/login');
    const cookie = `login_form=${guesser.cookies.get('login_form')!.value}`;
    const guess = (password: string) =>
      postFormFrom('127.0.0.9', `${example.base}/login`, { username: 'demo', password, return_to: '/', csrf: hiddenInput(form.text, 'csrf')! }, {
        cookie,
        origin: 'null',
        'sec-fetch-site': 'same-origin',
      });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await guess(`wrong${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const refused = await guess('demo');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    const user = new Visitor(example.base);
    const page = await signIn(user, 'demo', 'demo');
    expect(page.status, page.text.slice(0, 300)).toBe(303);
    expect(await platformSeesSignedIn(user)).toBe(true);
  });
});
