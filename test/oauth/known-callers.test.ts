/**
 * Known callers at the token endpoint (docs/oauth.md#brute-force-limits), on the memory, Redis and
 * PostgreSQL stores. The limits count an IPv6 caller by its /56, which a hosting provider splits
 * among its customers: a stranger's guesses from one server must not lock out a client's server
 * in the same /56 that proved the client's secret before. The guesser stays bounded: an address
 * that never proved the secret meets the /56's limit, right secret or not. Callers' addresses come
 * from a test header (the clientIp option), as from a trusted proxy's X-Forwarded-For.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { header } from '../../src/core/http.js';
import type { BruteForceOptions } from '../../src/oauth/options.js';
import { postFormFrom, type Answer } from '../support/from-address.js';
import { cheapClients } from '../support/oauth.js';
import { describePostgres, describeRedis } from '../support/services.js';
import { basic, closeHosts, SERVICE, startHost, testClock, type AdapterName, type TestClock, type TestHost } from './compliance/helpers.js';
import { memoryStores, postgresStores, redisStores, type StoreFactory } from './shared-stores.js';

const LIMIT = 10;

const statuses = async (count: number, send: (i: number) => Promise<Answer>) => {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await send(i)).status);
  return seen;
};
const WRONG = 'wrong-secret-1234';
/** Two customers' servers of one hosting provider: one /56, different /64s. */
const GUESSER = '2001:db8:3:d0::1:1';
const CLIENT_SERVER = '2001:db8:3:d0::2f:6001';
/** Another server of the client in the guesser's /56 that never asked for a token. */
const UNSEEN_SERVER = '2001:db8:3:1::5';

function knownCallerSuite(makeStores: () => StoreFactory) {
  let stores: StoreFactory;
  let clock: TestClock;
  beforeEach(() => {
    stores = makeStores();
    clock = testClock();
  });
  afterEach(async () => {
    await closeHosts();
    await stores.close();
  });

  const hostOn = async (adapter: AdapterName, bruteForce?: BruteForceOptions) =>
    startHost(adapter, {
      clock,
      oauth: { store: stores.open(clock.now), clients: await cheapClients(), storeTimeoutMs: 30_000, ...(bruteForce && { bruteForce }) },
      platform: { clientIp: (request) => header(request, 'x-test-ip') },
    });
  /** A client_credentials token request for the service client, as from `ip`. */
  const token = (host: TestHost, ip: string, secret: string): Promise<Answer> =>
    postFormFrom('127.0.0.1', `${host.origin}/oauth/token`, { grant_type: 'client_credentials' }, { authorization: basic(SERVICE.id, secret), 'x-test-ip': ip });
  const locked = Array<number>(2).fill(429);

  it("RFC 6749 10.10: a stranger's guesses lock its /56, but not the client's server in it that proved the secret before: it keeps getting tokens from its own address", async () => {
    const host = await hostOn('express');
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
    expect(await statuses(LIMIT + 2, () => token(host, GUESSER, WRONG))).toEqual([...Array<number>(LIMIT).fill(401), ...locked]);
    for (let i = 0; i < 3; i++) {
      const answer = await token(host, CLIENT_SERVER, SERVICE.secret);
      expect(answer.status).toBe(200);
      expect(answer.body.access_token).toEqual(expect.any(String));
    }
    // Known from its own address only: another address in the /56 gets 429, right secret or not.
    expect((await token(host, UNSEEN_SERVER, SERVICE.secret)).status).toBe(429);
    expect((await token(host, GUESSER, SERVICE.secret)).status).toBe(429);
  });

  it('RFC 6749 10.10: a guesser rotating its address inside the locked /56 meets the limit, and the right secret from a fresh address still gets 429', async () => {
    const host = await hostOn('koa');
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
    const fresh = (i: number) => `2001:db8:3:${(0xd0 + (i % 40)).toString(16)}::${(i + 1).toString(16)}`;
    expect(await statuses(LIMIT + 5, (i) => token(host, fresh(i), WRONG))).toEqual([...Array<number>(LIMIT).fill(401), ...Array<number>(5).fill(429)]);
    // The guess that would be right never tells: 429 from every fresh address, as for a wrong one.
    expect(await statuses(5, (i) => token(host, fresh(100 + i), SERVICE.secret))).toEqual(Array<number>(5).fill(429));
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
  });

  it("RFC 6749 10.10: a known caller's own wrong secrets meet its own limit, and then the right one gets 429 too", async () => {
    const host = await hostOn('express');
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
    expect(await statuses(LIMIT + 1, () => token(host, GUESSER, WRONG))).toEqual([...Array<number>(LIMIT).fill(401), 429]);
    expect(await statuses(LIMIT + 1, () => token(host, CLIENT_SERVER, WRONG))).toEqual([...Array<number>(LIMIT).fill(401), 429]);
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(429);
  });

  it('RFC 6749 10.10: a caller is known for knownCallerSeconds from its last proof, a proof while its /56 is locked included; past it, the locked /56 holds it too', async () => {
    const host = await hostOn('koa', { knownCallerSeconds: 60 });
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
    expect(await statuses(LIMIT + 1, () => token(host, GUESSER, WRONG))).toEqual([...Array<number>(LIMIT).fill(401), 429]);
    clock.advance(50);
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
    clock.advance(50);
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
    clock.advance(61);
    expect((await token(host, CLIENT_SERVER, SERVICE.secret)).status).toBe(429);
  });

  it('IPv4 callers count by their exact address: a caller known there shares its count with whoever shares the address', async () => {
    const host = await hostOn('express');
    expect((await token(host, '198.51.100.7', SERVICE.secret)).status).toBe(200);
    expect(await statuses(LIMIT + 1, () => token(host, '198.51.100.7', WRONG))).toEqual([...Array<number>(LIMIT).fill(401), 429]);
    expect((await token(host, '198.51.100.7', SERVICE.secret)).status).toBe(429);
  });
}

describe('known callers with the memory store', () => {
  knownCallerSuite(memoryStores);
});

function sharedSuite(makeStores: () => StoreFactory) {
  knownCallerSuite(makeStores);

  it('RFC 6749 10.10: a caller that proved the secret to one process is known to another on the same store', async () => {
    const stores = makeStores();
    const clock = testClock();
    try {
      const hostOn = async (adapter: AdapterName) =>
        startHost(adapter, {
          clock,
          oauth: { store: stores.open(clock.now), clients: await cheapClients(), storeTimeoutMs: 30_000 },
          platform: { clientIp: (request) => header(request, 'x-test-ip') },
        });
      const [first, second] = [await hostOn('express'), await hostOn('koa')];
      const token = (host: TestHost, ip: string, secret: string) =>
        postFormFrom('127.0.0.1', `${host.origin}/oauth/token`, { grant_type: 'client_credentials' }, { authorization: basic(SERVICE.id, secret), 'x-test-ip': ip });
      expect((await token(first, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
      for (let i = 0; i < LIMIT; i++) expect((await token(i % 2 ? first : second, GUESSER, WRONG)).status).toBe(401);
      expect((await token(second, GUESSER, WRONG)).status).toBe(429);
      expect((await token(second, CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
      expect((await token(second, UNSEEN_SERVER, SERVICE.secret)).status).toBe(429);
    } finally {
      await closeHosts();
      await stores.close();
    }
  });
}

describeRedis('known callers with the Redis store', () => {
  sharedSuite(redisStores);

  /** An Express host on the stores; the token endpoint's client_credentials request for the service client, as from `ip`. */
  async function tokenEndpoint(stores: StoreFactory, clock: TestClock, bruteForce?: BruteForceOptions) {
    const host = await startHost('express', {
      clock,
      oauth: { store: stores.open(clock.now), clients: await cheapClients(), storeTimeoutMs: 30_000, ...(bruteForce && { bruteForce }) },
      platform: { clientIp: (request) => header(request, 'x-test-ip') },
    });
    return (ip: string, secret: string) =>
      postFormFrom('127.0.0.1', `${host.origin}/oauth/token`, { grant_type: 'client_credentials' }, { authorization: basic(SERVICE.id, secret), 'x-test-ip': ip });
  }

  it('a known-callers key of another type is read as no mark (429, not 503) and written over by the next proof', async () => {
    const stores = redisStores();
    const clock = testClock();
    try {
      const token = await tokenEndpoint(stores, clock);
      expect((await token(CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
      const [key] = await stores.client().keys(`${stores.prefix}known-callers:*`);
      await stores.client().set(key!, 'not a sorted set');
      expect(await statuses(LIMIT + 2, () => token(GUESSER, WRONG))).toEqual([...Array<number>(LIMIT).fill(401), 429, 429]);
      // Its mark is gone with the key: the client's server meets the locked /56 like a stranger.
      expect((await token(CLIENT_SERVER, SERVICE.secret)).status).toBe(429);
      expect((await token(UNSEEN_SERVER, SERVICE.secret)).status).toBe(429);
      // A proof from elsewhere writes the client's marks again.
      expect((await token('2001:db8:9::1', SERVICE.secret)).status).toBe(200);
      expect(await stores.client().type(key!)).toBe('zset');
    } finally {
      await closeHosts();
      await stores.close();
    }
  });

  it("a caller's mark the store lost is written again at its next success once the lock has ended, and it is known again", async () => {
    const stores = redisStores();
    const clock = testClock();
    try {
      // A one-second window: the Redis store ends windows on its own clock.
      const token = await tokenEndpoint(stores, clock, { windowSeconds: 1 });
      expect((await token(CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
      const [key] = await stores.client().keys(`${stores.prefix}known-callers:*`);
      await stores.client().del(key!);
      expect(await statuses(LIMIT + 1, () => token(GUESSER, WRONG))).toEqual([...Array<number>(LIMIT).fill(401), 429]);
      expect((await token(CLIENT_SERVER, SERVICE.secret)).status).toBe(429);
      clock.advance(2);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await token(CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
      expect(await stores.client().type(key!)).toBe('zset');
      expect(await statuses(LIMIT + 1, (i) => token(`2001:db8:3:d0::7:${i}`, WRONG))).toEqual([...Array<number>(LIMIT).fill(401), 429]);
      expect((await token(CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
    } finally {
      await closeHosts();
      await stores.close();
    }
  });

  it("RFC 6749 10.10: from an address of a locked /56 that is not known, a right secret costs the store the same work as a wrong one, so its 429's timing tells nothing", async () => {
    const stores = redisStores();
    const clock = testClock();
    const monitor = await stores.client().monitor();
    const lookups: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toUpperCase() === 'ZSCORE' && args[1]?.startsWith(stores.prefix)) lookups.push(args[1]);
    });
    try {
      const token = await tokenEndpoint(stores, clock);
      // The process remembers the right secret, then the guesser's /56 is locked.
      expect((await token(CLIENT_SERVER, SERVICE.secret)).status).toBe(200);
      for (let i = 0; i <= LIMIT; i++) await token(GUESSER, WRONG);
      const lookupsOf = async (secret: string, i: number) => {
        const before = lookups.length;
        expect((await token(`2001:db8:3:d0::${(0x100 + i).toString(16)}`, secret)).status).toBe(429);
        // MONITOR reports a command after it ran; one more round trip makes sure it arrived.
        await stores.client().ping();
        await new Promise((resolve) => setTimeout(resolve, 20));
        return lookups.length - before;
      };
      const right = [await lookupsOf(SERVICE.secret, 1), await lookupsOf(SERVICE.secret, 2)];
      const wrong = [await lookupsOf(WRONG, 3), await lookupsOf(WRONG, 4)];
      expect(right[0]).toBeGreaterThan(0);
      expect(right).toEqual(wrong);
    } finally {
      monitor.disconnect();
      await closeHosts();
      await stores.close();
    }
  });
});

describePostgres('known callers with the PostgreSQL store', () => {
  sharedSuite(postgresStores);
});
