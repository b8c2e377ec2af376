/**
 * What only the start can find out (the store is unreachable when the start reaches it once) is
 * reported once: `ready()` rejects with code `oauth_unavailable` and the cause, the log
 * gets one error, /oauth answers 503 meanwhile and starts by itself once the store is back.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { OAuthUnavailableError } from '../../src/oauth/errors.js';
import { createMemoryOAuthStore } from '../../src/oauth/store/memory.js';
import type { OAuthStore } from '../../src/oauth/store/types.js';
import { capturingLogger } from '../support/logger.js';
import { ADAPTER_NAMES, CONFIDENTIAL, cheapClients, oauthHost, sharedSigningKey } from '../support/oauth.js';

/** A store that refuses every lookup while `down`, as one whose server is unreachable. */
function unreachableStore(): OAuthStore & { down: boolean } {
  const inner = createMemoryOAuthStore();
  const store = Object.create(inner) as OAuthStore & { down: boolean };
  store.down = true;
  store.getClient = (id) => (store.down ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')) : inner.getClient(id));
  return store;
}

const DISCOVERY = '/oauth/.well-known/openid-configuration';

/** An error and its causes, outermost first: the store's own error sits under the platform's. */
function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e = error; e instanceof Error && chain.length < 5; e = e.cause) chain.push(e);
  return chain;
}

describe.each(ADAPTER_NAMES)('an OAuth store that is down at start, on %s', (adapter) => {
  it('ready() rejects once with the cause; /oauth answers 503 until the store is back, then works', async () => {
    const store = unreachableStore();
    const logger = capturingLogger();
    const host = oauthHost(adapter, { store, clients: await cheapClients(), signingKeys: [await sharedSigningKey()], publicUrl: 'http://127.0.0.1:9' }, {}, logger);

    const failure = await host.ready().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OAuthUnavailableError);
    expect(failure).toMatchObject({ code: 'oauth_unavailable', status: 503 });
    expect(causes(failure).map((e) => e.message).join(' | ')).toMatch(/ECONNREFUSED/);

    // RFC 6749 5.2 JSON where JSON is served, with Retry-After.
    const discovery = await request(host.listener).get(DISCOVERY);
    expect(discovery.status).toBe(503);
    expect(discovery.headers['retry-after']).toBeDefined();
    expect(discovery.body).toMatchObject({ error: 'temporarily_unavailable' });

    // The browser's endpoint shows the error page.
    const authorize = await request(host.listener).get(`/oauth/authorize?client_id=${CONFIDENTIAL.id}`);
    expect(authorize.status).toBe(503);
    expect(authorize.headers['content-type']).toMatch(/^text\/html/);
    expect(authorize.text).toContain('temporarily_unavailable');

    const errors = () => logger.records.filter((record) => record.level === 'error');
    expect(errors()).toHaveLength(1);
    expect(errors()[0]!.message).toMatch(/could not start/);
    expect(errors()[0]!.line).toMatch(/ECONNREFUSED|StoreUnavailableError/);

    store.down = false;
    const healed = await request(host.listener).get(DISCOVERY);
    expect(healed.status).toBe(200);
    expect(errors()).toHaveLength(1);
    expect(logger.records.some((record) => record.level === 'info' && /started/.test(record.message))).toBe(true);
    // ready() reports the first attempt, once; it does not change its answer.
    await expect(host.ready()).rejects.toBe(failure);
  });
});
