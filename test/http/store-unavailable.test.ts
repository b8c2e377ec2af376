/**
 * An OAuth store that fails or hangs answers 503 on every adapter (docs/deployment.md): RFC 6749
 * 5.2 `temporarily_unavailable` JSON on the token and userinfo endpoints, the OAuth error page on
 * authorize, the envelope with code 1 on the guarded host routes and get_quota; never a 500, never
 * the framework's error page, and the host's handler never runs. The admin API's quota store
 * calls run through the same guard (docs/stores.md#deadlines-and-outages): a 503, one warning
 * per outage, and each failure in the metrics.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { createMemoryQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { capturingLogger } from '../support/logger.js';
import { ADAPTER_NAMES, accessToken, bearer, CONFIDENTIAL, closeHosts, OTHER, ping, startHost } from './quota-helpers.js';

type Mode = 'up' | 'failing' | 'hanging';

/** The memory store, with every call failing or hanging while `mode` says so. */
function switchableStore(): { store: OAuthStore; set(mode: Mode): void } {
  const memory = createMemoryOAuthStore();
  let mode: Mode = 'up';
  const store = new Proxy(memory, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      // Without the synchronous lookup the guard asks the store like a networked one.
      if (key === 'findAccessTokenSync') return undefined;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        mode === 'up' ? (value as (...a: unknown[]) => unknown).apply(target, args) : mode === 'failing' ? Promise.reject(new Error('ECONNRESET')) : new Promise(() => {});
    },
  });
  return { store, set: (next) => (mode = next) };
}

afterAll(closeHosts);

// A hanging store is waited out in real time (twice the deadline, then each call's deadline), and
// each test builds a store and a host of its own: the adapters run at once.
describe('an unavailable OAuth store', { concurrent: true }, () => {
  describe.each(ADAPTER_NAMES)('on %s', (adapter) => {
    for (const mode of ['failing', 'hanging'] as const) {
      it(`${mode}: every endpoint answers 503 in its own format, and the service heals when the store is back`, async () => {
        const { store, set } = switchableStore();
        const host = await startHost(adapter, { quota: {}, oauth: { store, storeTimeoutMs: 200 } });
        const { token } = await accessToken(host, CONFIDENTIAL);
        set(mode);

        const guarded = await ping(host, token);
        expect(guarded.status).toBe(503);
        expect(guarded.headers['retry-after']).toBe('1');
        expect(guarded.body).toMatchObject({ code: 1, data: null });
        expect(host.handled).toEqual([]);

        const quota = await host.http().get('/openapi/v1/get_quota?api_path=/openapi/v1/ping').set(bearer(token));
        expect(quota.status).toBe(503);
        expect(quota.body).toMatchObject({ code: 1 });

        // RFC 6749 5.2 and OIDC Core 5.3.3: the JSON error of the token and userinfo endpoints.
        const userinfo = await host.http().get('/oauth/userinfo').set(bearer(token));
        const refresh = await host
          .http()
          .post('/oauth/token')
          .auth(CONFIDENTIAL.id, CONFIDENTIAL.secret)
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: token });
        for (const res of [userinfo, refresh]) {
          expect(res.status).toBe(503);
          expect(res.headers['content-type']).toMatch(/^application\/json/);
          expect(res.headers['retry-after']).toBe('1');
          expect(res.body.error).toBe('temporarily_unavailable');
        }

        // The authorization endpoint needs the store for the user's consent: the OAuth error page.
        const query = new URLSearchParams({ response_type: 'code', client_id: OTHER.id, redirect_uri: OTHER.redirectUri, scope: 'openid', state: 's' });
        const authorize = await host.http().get(`/oauth/authorize?${query}`).set('x-test-user', 'alice');
        expect(authorize.status).toBe(503);
        expect(authorize.headers['content-type']).toMatch(/^text\/html/);
        expect(authorize.text).toContain('temporarily_unavailable');
        expect(authorize.text).not.toMatch(/ at .*\.(ts|js):\d+/);

        set('up');
        expect((await ping(host, token)).status).toBe(200);
        expect((await host.http().get('/oauth/userinfo').set(bearer(token))).status).toBe(200);
        await host.close();
      });
    }
  });
});

const OPERATOR = 'operator-token-0123456789abcdef0123456789';

/** The memory quota store, its stored rules answered like a networked store's, failing while `down`. */
function switchableRules(): QuotaStore & { down: boolean } {
  const memory = createMemoryQuotaStore();
  const rules = memory.rules!;
  const store: QuotaStore & { down: boolean } = {
    ...memory,
    down: false,
    rules: {
      inProcess: false,
      findRules: async (clientId, apiPath) => rules.findRules(clientId, apiPath),
      listRules: async () => (store.down ? Promise.reject(new Error('ECONNRESET')) : rules.listRules()),
      saveRule: async (rule) => rules.saveRule(rule),
      deleteRule: async (key) => rules.deleteRule(key),
    },
  };
  return store;
}

describe.each(ADAPTER_NAMES)('an unavailable quota store at the admin API on %s', (adapter) => {
  it('answers 503 with Retry-After, logs one warning and one notice, and counts each failure in the metrics', async () => {
    const store = switchableRules();
    const logger = capturingLogger();
    const host = await startHost(adapter, { quota: { store }, logger, platform: { admin: { token: OPERATOR } } });
    const admin = (path: string) => host.http().get(path).set('authorization', `Bearer ${OPERATOR}`);
    expect((await admin('/admin/rules')).status).toBe(200);

    store.down = true;
    for (let i = 0; i < 3; i++) {
      const res = await admin('/admin/rules');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).toMatchObject({ code: 1, data: null });
    }
    const metrics = await admin('/admin/metrics');
    expect(metrics.text).toMatch(/^courier_platform_store_errors_total\{store="quota store"\} 3$/m);

    store.down = false;
    expect((await admin('/admin/rules')).status).toBe(200);
    const lines = logger.records.filter((r) => /quota store/.test(r.message)).map((r) => `${r.level}: ${r.message}`);
    expect(lines).toEqual([expect.stringMatching(/^warn: quota store unavailable/), 'info: quota store available again']);
    await host.close();
  });
});
