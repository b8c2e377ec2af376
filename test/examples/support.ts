/**
 * The example (examples/site.ts on a host of examples/hosts/) built in process on a free loopback
 * port, and a visitor that talks to it the way a browser does: it keeps cookies (by path,
 * dropping cleared ones), sends Origin and Sec-Fetch-Site with its form posts, and follows
 * redirects on its own site.
 */
import { expect } from 'vitest';
import { readConfig } from '../../examples/config.js';
import { createHost, type Framework } from '../../examples/hosts/choice.js';
import { stopExample } from '../../examples/hosts/host.js';
import { createSite } from '../../examples/site.js';
import type { ExampleStores } from '../../examples/stores.js';
import { freePort } from '../support/net.js';

export interface RunningExample {
  base: string;
  close(): Promise<void>;
}

/**
 * `env` adds to the example's defaults (memory stores, the bundled sandbox); `stores` replaces
 * the ones STORE names; `framework` is the host, as EXAMPLE_FRAMEWORK names it.
 */
export async function startExample(env: Record<string, string> = {}, stores?: ExampleStores, framework: Framework = 'express'): Promise<RunningExample> {
  const port = await freePort();
  const site = await createSite(readConfig({ HOST: '127.0.0.1', PORT: String(port), ...env }), stores);
  try {
    const host = await createHost(framework, site);
    await host.ready();
    const listening = await host.listen(port, '127.0.0.1');
    return {
      base: `http://127.0.0.1:${port}`,
      close: () => stopExample(listening, host, site),
    };
  } catch (error) {
    await site.close();
    throw error;
  }
}

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  /** The Location header resolved against the page's URL. */
  location: URL | undefined;
  url: URL;
}

interface Cookie {
  value: string;
  path: string;
}

export class Visitor {
  readonly cookies = new Map<string, Cookie>();

  constructor(readonly base: string) {}

  /** One request, no redirect followed. Form posts carry the headers a browser adds on its own site. */
  async request(path: string | URL, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Page> {
    const url = new URL(path, this.base);
    const cookie = [...this.cookies]
      .filter(([, c]) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    for (const line of response.headers.getSetCookie()) this.store(line);
    const location = response.headers.get('location');
    return { status: response.status, headers: response.headers, text: await response.text(), location: location ? new URL(location, url) : undefined, url };
  }

  /**
   * A form post from a page of this site, as Chromium sends it: the example's pages say
   * `Referrer-Policy: no-referrer`, under which the browser sends `Origin: null`.
   */
  submit(path: string | URL, fields: Record<string, string> | URLSearchParams, headers: Record<string, string> = {}): Promise<Page> {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'null', 'sec-fetch-site': 'same-origin', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Follows redirects within this site (at most 10), the way a browser does after a page answered. */
  async follow(page: Page): Promise<Page> {
    let current = page;
    for (let hops = 0; current.location && current.status >= 300 && current.status < 400; hops++) {
      if (hops === 10 || current.location.origin !== new URL(this.base).origin) break;
      current = await this.request(current.location);
    }
    return current;
  }

  async open(path: string | URL): Promise<Page> {
    return this.follow(await this.request(path));
  }

  private store(line: string): void {
    const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const attribute = (key: string) => attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
    const expires = attribute('expires');
    const cleared = attribute('max-age') === '0' || (expires !== undefined && Date.parse(expires) <= Date.now());
    if (cleared) this.cookies.delete(name);
    else this.cookies.set(name, { value: pair.slice(eq + 1), path: attribute('path') ?? '/' });
  }
}

/** The value of a hidden input of a page, HTML entities decoded. */
export function hiddenInput(html: string, name: string): string | undefined {
  const raw = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1];
  return raw === undefined ? undefined : decodeHtml(raw);
}

export function decodeHtml(text: string): string {
  return text.replace(/&(#\d+|amp|lt|gt|quot);/g, (_, entity: string) =>
    entity.startsWith('#') ? String.fromCharCode(Number(entity.slice(1))) : ({ amp: '&', lt: '<', gt: '>', quot: '"' } as Record<string, string>)[entity]!,
  );
}

/** What a page must never show: a stack trace or an error's internals. */
export const STACK_TRACE = /\n\s+at |Error: |node_modules|\.ts:\d+/;

/** The headers every page of the example sends (the same as the platform's consent page). */
export function expectSecurityHeaders(headers: Headers): void {
  expect(headers.get('content-security-policy'), 'Content-Security-Policy').toMatch(/(?:^|;)\s*frame-ancestors 'none'\s*(?:;|$)/);
  expect(headers.get('content-security-policy'), 'Content-Security-Policy').toMatch(/(?:^|;)\s*default-src 'none'\s*(?:;|$)/);
  expect(headers.get('x-frame-options'), 'X-Frame-Options').toBe('DENY');
  expect(headers.get('referrer-policy'), 'Referrer-Policy').toBe('no-referrer');
  expect(headers.get('x-content-type-options'), 'X-Content-Type-Options').toBe('nosniff');
}

/** Opens the sign-in page and sends it with these credentials; answers the page the post led to (not followed). */
export async function signIn(visitor: Visitor, username = 'demo', password = 'demo', returnTo = '/'): Promise<Page> {
  const form = await visitor.open(`/login?return_to=${encodeURIComponent(returnTo)}`);
  expect(form.status).toBe(200);
  return visitor.submit('/login', { username, password, return_to: returnTo, csrf: hiddenInput(form.text, 'csrf') ?? '' });
}

/**
 * A sign-in as the browser goes through it: `start` (a page that sends to /oauth/authorize),
 * the example's login page as demo, the platform's consent page, then the decision. Answers
 * the decision's redirect, not followed.
 */
export async function decideAfterLogin(visitor: Visitor, start: string, decision: 'approve' | 'deny'): Promise<Page> {
  const login = await visitor.open(start);
  expect(login.url.pathname, login.text.slice(0, 300)).toBe('/login');
  const signedIn = await visitor.submit('/login', {
    username: 'demo',
    password: 'demo',
    return_to: hiddenInput(login.text, 'return_to')!,
    csrf: hiddenInput(login.text, 'csrf')!,
  });
  const consent = await visitor.follow(signedIn);
  expect(consent.url.pathname, consent.text.slice(0, 300)).toBe('/oauth/authorize');
  const action = decodeHtml(/<form method="post" action="([^"]*)">/.exec(consent.text)![1]!);
  return visitor.submit(action, { transaction: hiddenInput(consent.text, 'transaction')!, decision });
}
