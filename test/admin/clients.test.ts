/**
 * The admin API's applications (docs/operator.md), through HTTP: register one and sign a user in
 * with it, suspend and resume it, rotate its secret with an overlap, delete it; configured
 * clients stay read-only. On every adapter with the memory store, and with two platforms on one
 * Redis or PostgreSQL store (what one process changes, the other sees).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { OAuthStore } from '../../src/oauth/store/types.js';
import { ADAPTER_NAMES, closeHosts, CONFIDENTIAL, startHost, testClock, type Client, type TestHost } from '../oauth/compliance/helpers.js';
import { postgresStores, redisStores, type StoreFactory } from '../oauth/shared-stores.js';
import { describePostgres, describeRedis } from '../support/services.js';

afterEach(closeHosts);

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
const REDIRECT = 'http://127.0.0.1:9/registered';

function admin(host: TestHost) {
  const http = () => host.http();
  return {
    list: () => http().get('/admin/clients').set(OPERATOR),
    get: (id: string) => http().get(`/admin/clients/${encodeURIComponent(id)}`).set(OPERATOR),
    register: (body: unknown) => http().post('/admin/clients').set(OPERATOR).send(body as object),
    patch: (id: string, body: unknown) => http().patch(`/admin/clients/${encodeURIComponent(id)}`).set(OPERATOR).send(body as object),
    rotate: (id: string) => http().post(`/admin/clients/${encodeURIComponent(id)}/secret`).set(OPERATOR),
    remove: (id: string) => http().delete(`/admin/clients/${encodeURIComponent(id)}`).set(OPERATOR),
  };
}

async function register(host: TestHost): Promise<Client> {
  const res = await admin(host).register({ name: 'Shop backend', redirectUris: [REDIRECT], grants: ['authorization_code', 'refresh_token', 'client_credentials'] });
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

  it('suspends an application: its tokens and its client authentication fail at once; resuming restores them', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const client = await register(host);
    const tokens = await signIn(host, client);

    expect((await admin(host).patch(client.id, { status: 'suspended' })).body.data.status).toBe('suspended');
    expect((await host.userinfo(tokens.access_token)).status).toBe(401);
    expect((await host.refresh(tokens.refresh_token, {}, client)).status).toBe(401);
    expect((await host.introspect({ token: tokens.access_token })).body).toEqual({ active: false });

    await admin(host).patch(client.id, { status: 'active' });
    expect((await host.userinfo(tokens.access_token)).status).toBe(200);
    expect((await clientCredentials(host, client)).status).toBe(200);
  });

  it('rotates a secret: both work during the overlap, only the new one after', async () => {
    const clock = testClock();
    const host = await startHost(adapter, { clock, platform: { admin: { token: TOKEN, secretOverlapSeconds: 3600 } } });
    const client = await register(host);
    const rotated = await admin(host).rotate(client.id);
    expect(rotated.status).toBe(200);
    const { client_secret: fresh, previous_valid_until: until } = rotated.body.data as { client_secret: string; previous_valid_until: string };
    expect(Date.parse(until)).toBe(clock.now() + 3600_000);
    expect((await clientCredentials(host, client)).status).toBe(200);
    expect((await clientCredentials(host, { ...client, secret: fresh })).status).toBe(200);
    clock.advance(3601);
    expect((await clientCredentials(host, client)).status).toBe(401);
    expect((await clientCredentials(host, { ...client, secret: fresh })).status).toBe(200);
  });

  it('deletes an application: its tokens stop working; configured clients are read-only (409); a bad body is a 400 naming the field', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    const client = await register(host);
    const tokens = await signIn(host, client);
    expect((await admin(host).remove(client.id)).body.data).toEqual({ id: client.id, deleted: true });
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
    // Both processes share one clock; it starts at the wall clock's time because the stores keep their own.
    const clock = testClock(Date.now());
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

      await admin(one).patch(client.id, { status: 'suspended' });
      after5s();
      expect([await works(two, renewed), (await two.userinfo(tokens.access_token)).status]).toEqual([false, 401]);
      await admin(one).patch(client.id, { status: 'active' });
      after5s();
      expect([await works(two, renewed), (await two.userinfo(tokens.access_token)).status]).toEqual([true, 200]);

      // Deleted: its users' grants end in the store, so the other process refuses the token at
      // once, though it may still know the client for a few seconds.
      expect((await admin(one).remove(client.id)).status).toBe(200);
      expect((await two.userinfo(tokens.access_token)).status).toBe(401);
      after5s();
      expect(await works(two, renewed)).toBe(false);
    });
  });
}

describeRedis('Redis', () => twoProcesses('Redis', redisStores));
describePostgres('PostgreSQL', () => twoProcesses('PostgreSQL', postgresStores));
