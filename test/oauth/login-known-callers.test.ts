/**
 * Known callers of a user at the host's login page (docs/oauth.md#brute-force-limits), through HTTP
 * on the memory, Redis and PostgreSQL stores. The login throttle counts an IPv6 caller by its /56,
 * which a mobile carrier or a hosting provider shares among many: a stranger's guesses at a user's
 * password from that /56 must not lock the user out of an address it signed in from before. The
 * guesser stays bounded: an address that never signed in meets the /56's limit, right password or
 * not. The page is docs/oauth.md's Express example behind a trusted proxy (Express 'trust proxy',
 * docs/deployment.md#clientip), so each request names its caller in X-Forwarded-For.
 */
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createLoginThrottle, type LoginThrottleOptions } from '../../src/oauth/login-throttle.js';
import type { OAuthStore } from '../../src/oauth/store/types.js';
import { serve, type Served } from '../support/net.js';
import { testClock } from './compliance/helpers.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { memoryStores, postgresStores, redisStores, storesForEachTest, type StoreFactory } from './shared-stores.js';

const FAILURES = 5;
const USER = 'alice';
const PASSWORD = 'correct horse battery staple';
/** One /56 of a mobile carrier: the user's phone and a stranger's, different /64s. */
const USER_PHONE = '2001:db8:7:a0::1:2';
const GUESSER = '2001:db8:7:a1::9';
/** The user's own laptop in the same /56, never signed in from. */
const UNSEEN = '2001:db8:7:ff::3';

/** docs/oauth.md's login page, with one user. */
async function loginPage(store: OAuthStore, options: Omit<LoginThrottleOptions, 'store'> = {}): Promise<Served> {
  const logins = createLoginThrottle({ store, windowSeconds: 60, ...options });
  const app = express();
  app.set('trust proxy', 'loopback');
  app.post('/login', express.urlencoded({ extended: false }), async (req, res) => {
    const { username, password } = req.body as Record<string, unknown>;
    if (typeof username !== 'string' || typeof password !== 'string') {
      res.status(400).send('Send the user name and password once.');
      return;
    }
    const attempt = await logins.attempt(username, req.ip ?? 'unknown').catch(() => undefined);
    if (!attempt) {
      res.status(503).set('Retry-After', '1').send('Try again in a moment.');
      return;
    }
    if (attempt.retryAfter > 0) {
      res.status(429).set('Retry-After', String(attempt.retryAfter)).send('Too many attempts; try again later.');
      return;
    }
    if (username !== USER || password !== PASSWORD) {
      res.status(401).send('Wrong user name or password.');
      return;
    }
    await attempt.succeeded();
    res.redirect(303, '/');
  });
  return serve(app);
}

/** One sign-in as `ip`: the answer's status. */
async function signIn(page: Served, ip: string, password: string, username = USER): Promise<number> {
  const response = await fetch(`${page.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body: new URLSearchParams({ username, password }).toString(),
  });
  await response.arrayBuffer();
  return response.status;
}

function knownCallerSuite(makeStores: () => StoreFactory) {
  const stores = storesForEachTest(makeStores);
  const pages: Served[] = [];
  afterEach(async () => {
    await Promise.all(pages.splice(0).map((page) => page.close()));
  });
  const open = async (options?: Omit<LoginThrottleOptions, 'store'>) => {
    const page = await loginPage(stores().open(), options);
    pages.push(page);
    return page;
  };
  const statuses = async (count: number, send: (i: number) => Promise<number>) => {
    const seen: number[] = [];
    for (let i = 0; i < count; i++) seen.push(await send(i));
    return seen;
  };
  const wrong = (i: number) => `wrong-${i}`;

  it("a stranger's guesses at a user's password lock its /56, but not the address the user signed in from before: the user signs in from it again", async () => {
    const page = await open();
    expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
    expect(await statuses(FAILURES + 2, (i) => signIn(page, GUESSER, wrong(i)))).toEqual([...Array<number>(FAILURES).fill(401), 429, 429]);
    for (let i = 0; i < 3; i++) expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
    // Known from its own address only: another address in the /56 gets 429, right password or not.
    expect(await signIn(page, UNSEEN, PASSWORD)).toBe(429);
    expect(await signIn(page, GUESSER, PASSWORD)).toBe(429);
  });

  it('a guesser rotating its address inside the /56 meets the limit, and the right password from an address that never signed in gets 429 too', async () => {
    const page = await open();
    expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
    const fresh = (i: number) => `2001:db8:7:${(0xa1 + (i % 40)).toString(16)}::${(i + 1).toString(16)}`;
    expect(await statuses(FAILURES + 5, (i) => signIn(page, fresh(i), wrong(i)))).toEqual([...Array<number>(FAILURES).fill(401), ...Array<number>(5).fill(429)]);
    // The guess that would be right never tells: 429 from every fresh address, as for a wrong one.
    expect(await statuses(5, (i) => signIn(page, fresh(100 + i), PASSWORD))).toEqual(Array<number>(5).fill(429));
    expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
  });

  it("a known address's own wrong passwords meet its own limit, and then the right one gets 429 too", async () => {
    const page = await open();
    expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
    expect(await statuses(FAILURES + 1, (i) => signIn(page, GUESSER, wrong(i)))).toEqual([...Array<number>(FAILURES).fill(401), 429]);
    expect(await statuses(FAILURES + 1, (i) => signIn(page, USER_PHONE, wrong(i)))).toEqual([...Array<number>(FAILURES).fill(401), 429]);
    expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(429);
  });

  it("an address is known to the user it signed in as, not to another user of the page: the other's guessed name stays locked there", async () => {
    const page = await open();
    expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
    expect(await statuses(FAILURES + 1, (i) => signIn(page, GUESSER, wrong(i), 'bob'))).toEqual([...Array<number>(FAILURES).fill(401), 429]);
    expect(await signIn(page, USER_PHONE, wrong(0), 'bob')).toBe(429);
    // The user's name is counted on its own: nobody guessed at it.
    expect(await signIn(page, UNSEEN, PASSWORD)).toBe(303);
  });

  it('IPv4 callers count by their exact address: a user known there shares its count with whoever shares the address', async () => {
    const page = await open();
    expect(await signIn(page, '198.51.100.7', PASSWORD)).toBe(303);
    expect(await statuses(FAILURES + 1, (i) => signIn(page, '198.51.100.7', wrong(i)))).toEqual([...Array<number>(FAILURES).fill(401), 429]);
    expect(await signIn(page, '198.51.100.7', PASSWORD)).toBe(429);
  });
}

describe('known callers of the login page with the memory store', () => {
  knownCallerSuite(memoryStores);
});

function sharedSuite(makeStores: () => StoreFactory) {
  knownCallerSuite(makeStores);

  it('an address that signed in through one process is known to another on the same store', async () => {
    const stores = makeStores();
    const pages: Served[] = [];
    try {
      pages.push(await loginPage(stores.open()), await loginPage(stores.open()));
      const [first, second] = pages as [Served, Served];
      expect(await signIn(first, USER_PHONE, PASSWORD)).toBe(303);
      for (let i = 0; i < FAILURES; i++) expect(await signIn(i % 2 ? first : second, GUESSER, `wrong-${i}`)).toBe(401);
      expect(await signIn(second, GUESSER, 'wrong')).toBe(429);
      expect(await signIn(second, USER_PHONE, PASSWORD)).toBe(303);
      expect(await signIn(second, UNSEEN, PASSWORD)).toBe(429);
    } finally {
      await Promise.all(pages.map((page) => page.close()));
      await stores.close();
    }
  });

  it('an address is known for knownCallerSeconds from its latest sign-in, one while its /56 is locked included; past it, the locked /56 holds it too', async () => {
    const stores = makeStores();
    const clock = testClock();
    const page = await loginPage(stores.open(clock.now), { knownCallerSeconds: 60, windowSeconds: 900 });
    try {
      expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
      for (let i = 0; i < FAILURES; i++) expect(await signIn(page, GUESSER, `wrong-${i}`)).toBe(401);
      expect(await signIn(page, GUESSER, 'wrong')).toBe(429);
      clock.advance(50);
      expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
      clock.advance(50);
      expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(303);
      clock.advance(61);
      expect(await signIn(page, USER_PHONE, PASSWORD)).toBe(429);
    } finally {
      await page.close();
      await stores.close();
    }
  });
}

describeRedis('known callers of the login page with the Redis store', () => {
  sharedSuite(redisStores);
});

describePostgres('known callers of the login page with the PostgreSQL store', () => {
  sharedSuite(postgresStores);
});
