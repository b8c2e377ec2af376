/**
 * The admin API's applications (docs/operator.md), through HTTP: register one and sign a user in
 * with it, suspend and resume it, rotate its secret with an overlap, delete it; configured
 * clients stay read-only. On every adapter with the memory store, and with two platforms on one
 * Redis or PostgreSQL store (what one process changes, the other sees).
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryOAuthStore } from '../../src/oauth/store/index.js';
import type { OAuthStore } from '../../src/oauth/store/types.js';
import { ADAPTER_NAMES, closeHosts, CONFIDENTIAL, SERVICE, startHost, testClock, type Client, type TestHost } from '../oauth/compliance/helpers.js';
import { postgresStores, redisStores, type StoreFactory } from '../oauth/shared-stores.js';
import { describePostgres, describeRedis } from '../support/services.js';

afterEach(closeHosts);

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
const REDIRECT = 'http://127.0.0.1:9/registered';

function admin(host: TestHost) {
  const http = () => host.http();
  return {
    list: (query: Record<string, string> | [string, string][] = {}) => http().get(`/admin/clients?${new URLSearchParams(query)}`).set(OPERATOR),
    get: (id: string) => http().get(`/admin/clients/${encodeURIComponent(id)}`).set(OPERATOR),
    register: (body: unknown) => http().post('/admin/clients').set(OPERATOR).send(body as object),
    patch: (id: string, body: unknown) => http().patch(`/admin/clients/${encodeURIComponent(id)}`).set(OPERATOR).send(body as object),
    rotate: (id: string, query = '') => http().post(`/admin/clients/${encodeURIComponent(id)}/secret${query}`).set(OPERATOR),
    remove: (id: string) => http().delete(`/admin/clients/${encodeURIComponent(id)}`).set(OPERATOR),
  };
}

async function register(host: TestHost, name = 'Shop backend'): Promise<Client> {
  const res = await admin(host).register({ name, redirectUris: [REDIRECT], grants: ['authorization_code', 'refresh_token', 'client_credentials'] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.headers['cache-control']).toBe('no-store');
  const { client, client_secret: secret } = res.body.data as { client: { id: string; source: string; status: string }; client_secret: string };
  expect([client.source, client.status, typeof secret]).toEqual(['store', 'active', 'string']);
  return { id: client.id, secret, redirectUri: REDIRECT };
}

/** A user signs in with the client: consent, code, tokens. */
async function signIn(host: TestHost, client: Client) {
  const callback = await host.code({ client_id: client.id, redirect_uri: client.redirectUri, scope: 'openid offline_access' });
  const res = await host.exchange(callback.get('code')!, { client });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { access_token: string; refresh_token: string };
}

const clientCredentials = (host: TestHost, client: Client) => host.token({ grant_type: 'client_credentials' }, { basic: client });

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Where a token is accepted: userinfo, get_quota (the guard's token check) for the user's and the
 * client's own access token, introspection by a resource server (RFC 7662) of the access, refresh
 * and own tokens, and last a refresh, which rotates the refresh token: `tokens` are the live ones
 * after it.
 */
async function everywhere(host: TestHost, client: Client, tokens: { access_token: string; refresh_token: string }, own: string) {
  const quota = async (token: string) => (await host.get('/openapi/v1/get_quota?api_path=/openapi/v1/ping', undefined, bearer(token))).status;
  const active = async (token: string) => (await host.introspect({ token }, { basic: SERVICE })).body.active as boolean;
  const userinfo = (await host.userinfo(tokens.access_token)).status;
  const quotas = [await quota(tokens.access_token), await quota(own)];
  const introspect = [await active(tokens.access_token), await active(tokens.refresh_token), await active(own)];
  const refresh = await host.refresh(tokens.refresh_token, {}, client);
  return {
    summary: { userinfo, quota: quotas, introspect, refreshed: refresh.status },
    tokens: refresh.status === 200 ? (refresh.body as { access_token: string; refresh_token: string }) : tokens,
  };
}

interface ListedClient {
  id: string;
  status: string;
  source: string;
}

/** Every page of `GET /admin/clients` with this query, following `next_cursor` (bounded). */
async function allPages(host: TestHost, query: Record<string, string>): Promise<{ pages: ListedClient[][]; ids: string[] }> {
  const pages: ListedClient[][] = [];
  let cursor: string | null = null;
  do {
    const res = await admin(host).list({ ...query, ...(cursor ? { cursor } : {}) });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'next_cursor']);
    pages.push(res.body.data as ListedClient[]);
    cursor = res.body.next_cursor as string | null;
  } while (cursor !== null && pages.length < 50);
  return { pages, ids: pages.flat().map((client) => client.id) };
}

/** Byte order of ASCII ids: the order the list promises. */
const sortedIds = (ids: string[]) => [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** Pages of two through every client, a status filter, and the limits; the same on every store. */
async function pagesThroughClients(host: TestHost): Promise<void> {
  const registered = [await register(host, 'First'), await register(host, 'Second'), await register(host, 'Third')];
  expect((await admin(host).patch(registered[1]!.id, { status: 'suspended' })).status).toBe(200);

  const everything = await admin(host).list();
  expect(everything.body.next_cursor).toBeNull();
  const allIds = (everything.body.data as ListedClient[]).map((client) => client.id);
  expect(allIds).toEqual(sortedIds(allIds));
  expect(allIds).toEqual(expect.arrayContaining([CONFIDENTIAL.id, ...registered.map((client) => client.id)]));

  const paged = await allPages(host, { limit: '2' });
  expect(paged.ids).toEqual(allIds);
  expect(paged.pages.every((page) => page.length <= 2)).toBe(true);
  expect(paged.pages.length).toBe(Math.ceil(allIds.length / 2));

  const suspended = await allPages(host, { status: 'suspended', limit: '1' });
  expect(suspended.ids).toEqual([registered[1]!.id]);
  const active = await allPages(host, { status: 'active', limit: '3' });
  expect(active.ids).toEqual(allIds.filter((id) => id !== registered[1]!.id));
  expect(active.pages.flat().every((client) => client.status === 'active')).toBe(true);

  // A cursor spelled right but naming a NUL is the caller's mistake, not the store failing.
  const forged = await admin(host).list({ cursor: 'AA' });
  expect([forged.status, forged.body.data.errors[0].field]).toEqual([400, 'cursor']);
  expect((await admin(host).list()).status).toBe(200);
}

describe.each(ADAPTER_NAMES)('admin clients on %s', (adapter) => {
  it('registers an application that signs a user in; lists it beside the configured ones, never with a secret', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const client = await register(host);
    const tokens = await signIn(host, client);
    expect((await host.userinfo(tokens.access_token)).status).toBe(200);

    const list = await admin(host).list();
    expect(list.status).toBe(200);
    const byId = new Map((list.body.data as { id: string; source: string }[]).map((c) => [c.id, c.source]));
    expect([byId.get(client.id), byId.get(CONFIDENTIAL.id)]).toEqual(['store', 'options']);
    expect(JSON.stringify(list.body)).not.toMatch(/scrypt|secret"?:\s*"/i);
    expect((await admin(host).get(client.id)).body.data).toMatchObject({ id: client.id, name: 'Shop backend', public: false });
    expect((await admin(host).get('nobody')).status).toBe(404);
  });

  it('lists the clients a page at a time in id order, follows next_cursor to the end, and filters by status', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    await pagesThroughClients(host);
  });

  it('refuses a bad limit, status or cursor with a 400 naming the parameter', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    for (const [query, field] of [
      [{ limit: '0' }, 'limit'],
      [{ limit: '501' }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
    [{ limit: '0x10' }, 'limit'],
    [{ limit: '1e2' }, 'limit'],
    [{ limit: ' 5' }, 'limit'],
      [{ status: 'deleted' }, 'status'],
      [{ cursor: 'not a cursor!' }, 'cursor'],
      // The exact spelling of a cursor, but of a NUL, which no id holds and PostgreSQL text cannot.
      [{ cursor: 'AA' }, 'cursor'],
      [{ page: '2' }, 'page'],
      [[['status', 'active'], ['status', 'suspended']], 'status'],
      [[['limit', '1'], ['limit', '2']], 'limit'],
    ] as const) {
      const res = await admin(host).list(query as Record<string, string> | [string, string][]);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.data.errors[0].field).toBe(field);
    }
    expect((await admin(host).list({ limit: '500' })).status).toBe(200);
  });

  it('refuses a plain http redirect URI on a public host (RFC 6749 3.1.2.1) and accepts one on the loopback (RFC 8252 7.3)', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const plain = await admin(host).register({ name: 'Web app', redirectUris: ['https://shop.example/cb', 'http://shop.example/cb'] });
    expect(plain.status).toBe(400);
    expect(plain.body.data.errors).toEqual([{ field: 'redirectUris[1]', rule: 'https', message: expect.stringMatching(/^must be https/) }]);
    for (const loopback of ['http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb', 'http://localhost:8080/cb']) {
      expect((await admin(host).register({ name: 'Native app', public: true, redirectUris: [loopback] })).status, loopback).toBe(201);
    }
    const registered = await register(host);
    const changed = await admin(host).patch(registered.id, { redirectUris: ['http://shop.example/cb'] });
    expect([changed.status, changed.body.data.errors[0].field]).toEqual([400, 'redirectUris[0]']);
  });

  it('refuses a control character in a name or a redirect URI with a 400 naming the field (a NUL could not be stored or sent back)', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const named = await admin(host).register({ name: 'Shop\u0000app', redirectUris: ['https://shop.example/cb'] });
    expect([named.status, named.body.data.errors[0].field]).toEqual([400, 'name']);
    const uri = await admin(host).register({ name: 'Shop', redirectUris: ['https://shop.example/cb\u0000'] });
    expect([uri.status, uri.body.data.errors[0].field]).toEqual([400, 'redirectUris[0]']);
    const registered = await register(host);
    const renamed = await admin(host).patch(registered.id, { name: 'line\nbreak' });
    expect([renamed.status, renamed.body.data.errors[0].field]).toEqual([400, 'name']);
  });

  it('suspends an application: every token of it (refresh tokens included) and its client authentication fail at once; tokens from before stay dead after the resume', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, platform: { admin: { token: TOKEN } } });
    const client = await register(host);
    const tokens = await signIn(host, client);
    const own = (await clientCredentials(host, client)).body.access_token as string;
    const before = await everywhere(host, client, tokens, own);
    expect(before.summary).toEqual({ userinfo: 200, quota: [200, 200], introspect: [true, true, true], refreshed: 200 });
    const live = before.tokens;

    expect((await admin(host).patch(client.id, { status: 'suspended' })).body.data.status).toBe('suspended');
    expect((await everywhere(host, client, live, own)).summary).toEqual({ userinfo: 401, quota: [401, 401], introspect: [false, false, false], refreshed: 401 });
    expect((await clientCredentials(host, client)).status).toBe(401);

    clock.advance(1);
    await admin(host).patch(client.id, { status: 'active' });
    // RFC 6749 10.4 / docs/operator.md: what was issued before the resume stays dead; the refresh token no longer refreshes.
    expect((await everywhere(host, client, live, own)).summary).toEqual({ userinfo: 401, quota: [401, 401], introspect: [false, false, false], refreshed: 400 });
    // The application itself works again: new tokens, by either grant.
    const fresh = await signIn(host, client);
    const ownAgain = (await clientCredentials(host, client)).body.access_token as string;
    expect((await everywhere(host, client, fresh, ownAgain)).summary).toEqual(before.summary);
  });

  it('rotates a secret: both work during the overlap, only the new one after; the client shows previous_valid_until as the rotation said', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, platform: { admin: { token: TOKEN, secretOverlapSeconds: 3600 } } });
    const client = await register(host);
    expect((await admin(host).get(client.id)).body.data.previous_valid_until).toBeNull();
    const rotated = await admin(host).rotate(client.id);
    expect(rotated.status).toBe(200);
    const { client_secret: fresh, previous_valid_until: until } = rotated.body.data as { client_secret: string; previous_valid_until: string };
    expect(rotated.body.data.older_secret_ended).toBe(false);
    expect(Date.parse(until)).toBe(clock.now() + 3600_000);
    const shown = (await admin(host).get(client.id)).body.data;
    expect(shown.previous_valid_until).toBe(until);
    expect(shown).not.toHaveProperty('previousSecretValidUntil');
    expect((await clientCredentials(host, client)).status).toBe(200);
    expect((await clientCredentials(host, { ...client, secret: fresh })).status).toBe(200);
    clock.advance(3601);
    expect((await clientCredentials(host, client)).status).toBe(401);
    expect((await clientCredentials(host, { ...client, secret: fresh })).status).toBe(200);
    expect((await admin(host).get(client.id)).body.data.previous_valid_until).toBeNull();
  });

  it('a second rotation within the overlap is a 409 that leaves both secrets working; force=true ends the older one at once', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, platform: { admin: { token: TOKEN, secretOverlapSeconds: 3600 } } });
    const first = await register(host);
    const second = { ...first, secret: (await admin(host).rotate(first.id)).body.data.client_secret as string };
    clock.advance(60);

    const refused = await admin(host).rotate(first.id);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/works until .*force=true/);
    expect([(await clientCredentials(host, first)).status, (await clientCredentials(host, second)).status]).toEqual([200, 200]);
    expect((await admin(host).rotate(first.id, '?force=maybe')).body.data.errors[0].field).toBe('force');

    const forced = await admin(host).rotate(first.id, '?force=true');
    expect(forced.status).toBe(200);
    expect(forced.body.data).toMatchObject({ older_secret_ended: true, previous_valid_until: new Date(clock.now() + 3600_000).toISOString() });
    const third = { ...first, secret: forced.body.data.client_secret as string };
    expect((await clientCredentials(host, first)).status).toBe(401);
    expect([(await clientCredentials(host, second)).status, (await clientCredentials(host, third)).status]).toEqual([200, 200]);

    // Once the overlap is over, a rotation needs no force.
    clock.advance(3601);
    expect((await admin(host).rotate(first.id)).body.data.older_secret_ended).toBe(false);
  });

  it('a deletion the store fails part way is a 503 that leaves the application suspended, its tokens dead, and a retry finishes it', async () => {
    const memory = createMemoryOAuthStore();
    let failures = 1;
    const store: OAuthStore = {
      ...memory,
      deleteClient: async (id, call) => {
        if (failures-- > 0) throw new Error('connection reset');
        return memory.deleteClient(id, call);
      },
    };
    const host = await startHost(adapter, { oauth: { store }, platform: { admin: { token: TOKEN } } });
    const client = await register(host);
    const tokens = await signIn(host, client);

    expect((await admin(host).remove(client.id)).status).toBe(503);
    expect((await admin(host).get(client.id)).body.data.status).toBe('suspended');
    expect((await host.userinfo(tokens.access_token)).status).toBe(401);
    expect((await admin(host).remove(client.id)).body.data).toEqual({ id: client.id, deleted: true, rules_deleted: 0 });
    expect((await admin(host).get(client.id)).status).toBe(404);
  });

  it('deletes an application: its tokens stop working; configured clients are read-only (409); a bad body is a 400 naming the field', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const client = await register(host);
    const tokens = await signIn(host, client);
    expect((await admin(host).remove(client.id)).body.data).toEqual({ id: client.id, deleted: true, rules_deleted: 0 });
    expect((await host.userinfo(tokens.access_token)).status).toBe(401);
    expect((await admin(host).get(client.id)).status).toBe(404);
    expect((await admin(host).remove(client.id)).status).toBe(404);

    expect((await admin(host).patch(CONFIDENTIAL.id, { name: 'Renamed' })).status).toBe(409);
    expect((await admin(host).remove(CONFIDENTIAL.id)).status).toBe(409);
    const bad = await admin(host).register({ name: 'x', redirectUris: ['/relative'] });
    expect(bad.status).toBe(400);
    expect(bad.body.data.errors[0].field).toBe('redirectUris[0]');
    const publicCredentials = await admin(host).register({ name: 'x', redirectUris: [REDIRECT], public: true, grants: ['client_credentials'] });
    expect(publicCredentials.status).toBe(400);
    expect((await host.http().post('/admin/clients').send({ name: 'x', redirectUris: [REDIRECT] })).status).toBe(401);
  });
});

function twoProcesses(label: string, factory: () => StoreFactory) {
  describe(`admin clients on a shared ${label} store`, () => {
    const stores = factory();
    afterAll(() => stores.close());
    // Both processes share one clock. Each test starts it at the wall clock's time, because the
    // stores keep their own: a clock set when the file was collected would be behind by the time
    // the earlier tests took, and a code issued by it could be already expired for the store.
    let clock = testClock(Date.now());
    beforeEach(() => void (clock = testClock(Date.now())));
    const start = (store: OAuthStore) => startHost('express', { clock, oauth: { store }, platform: { admin: { token: TOKEN } } });

    /** Client authentication passes (a refusal is 401, or 429 once the refusals reach the brute-force limit). */
    const works = async (host: TestHost, client: Client) => (await clientCredentials(host, client)).status === 200;

    /** A process re-reads a client at most every 5 s (docs/operator.md): past that, it follows the store. */
    const after5s = () => clock.advance(5);

    it('a client registered, rotated, suspended, resumed and deleted through one process is followed by the other within 5 s', async () => {
      const [one, two] = [await start(stores.open()), await start(stores.open())];
      const client = await register(one);
      const tokens = await signIn(two, client);
      expect((await two.userinfo(tokens.access_token)).status).toBe(200);

      // A rotation: the new secret works on the other process too, and the old one through the overlap.
      const rotated = await admin(one).rotate(client.id);
      expect(rotated.status).toBe(200);
      const renewed = { ...client, secret: rotated.body.data.client_secret as string };
      after5s();
      expect([await works(two, renewed), await works(two, client)]).toEqual([true, true]);

      // Suspended: its access and refresh tokens stop on the other process too (RFC 7662 2.2: inactive).
      const active = async (host: TestHost, token: string) => (await host.introspect({ token }, { basic: SERVICE })).body.active === true;
      expect([await active(two, tokens.access_token), await active(two, tokens.refresh_token)]).toEqual([true, true]);
      await admin(one).patch(client.id, { status: 'suspended' });
      after5s();
      expect([(await two.userinfo(tokens.access_token)).status, await active(two, tokens.refresh_token)]).toEqual([401, false]);
      expect(await works(two, renewed)).toBe(false);
      await admin(one).patch(client.id, { status: 'active' });
      after5s();
      expect(await works(two, renewed)).toBe(true);
      // Resumed: what was issued before stays dead in both processes; new sign-ins work in both.
      for (const host of [one, two]) {
        expect((await host.userinfo(tokens.access_token)).status).toBe(401);
        expect(await active(host, tokens.refresh_token)).toBe(false);
        const refused = await host.refresh(tokens.refresh_token, {}, renewed);
        expect([refused.status, refused.body.error], JSON.stringify(refused.body)).toEqual([400, 'invalid_grant']);
      }
      const fresh = await signIn(two, renewed);
      expect([(await one.userinfo(fresh.access_token)).status, (await two.userinfo(fresh.access_token)).status]).toEqual([200, 200]);

      // Deleted: its users' grants end in the store, so the other process refuses the token at
      // once, though it may still know the client for a few seconds.
      expect((await admin(one).remove(client.id)).status).toBe(200);
      expect((await two.userinfo(fresh.access_token)).status).toBe(401);
      after5s();
      expect(await works(two, renewed)).toBe(false);
    }, 30_000);

    it('lists the clients of the shared store a page at a time, in id order, filtered by status', async () => {
      await pagesThroughClients(await start(stores.open()));
    });
  });
}

describeRedis('Redis', () => twoProcesses('Redis', redisStores));
describePostgres('PostgreSQL', () => twoProcesses('PostgreSQL', postgresStores));
