/**
 * What only the start can find out (the store is unreachable when the start reaches it once) is
 * reported once: `ready()` rejects with code `oauth_unavailable` and the cause, the log
 * gets one error, /oauth answers 503 meanwhile and starts by itself once the store is back.
 * A store that is only connecting is waited for (docs/deployment.md#start), and one that is
 * really down is named with its address and error, never with its password.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import pg from 'pg';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_DEADLINE_MS } from '../../src/core/store-connection.js';
import { OAuthUnavailableError } from '../../src/oauth/errors.js';
import { createMemoryOAuthStore } from '../../src/oauth/store/memory.js';
import { createPostgresOAuthStore, createRedisOAuthStore } from '../../src/oauth/store/index.js';
import type { OAuthStore } from '../../src/oauth/store/types.js';
import { capturingLogger } from '../support/logger.js';
import { freePort } from '../support/net.js';
import { ADAPTER_NAMES, CONFIDENTIAL, cheapClients, oauthHost, sharedSigningKey } from '../support/oauth.js';
import { CONNECTING, readyOutcome } from '../support/startup.js';
import { describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { hostPort, startTcpProxy, viaProxy, type TcpProxy } from '../support/tcp-proxy.js';

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


describeRedis('ready() with a Redis client that is still connecting', () => {
  let proxy: TcpProxy;
  const clients: (Redis | Cluster)[] = [];
  beforeAll(async () => {
    proxy = await startTcpProxy(hostPort(redisUrl as string, 6379), CONNECTING);
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await proxy.close();
  });

  const options: [string, RedisOptions][] = [
    ['ioredis defaults', {}],
    ['enableOfflineQueue: false, as docs/stores.md recommends', { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false }],
  ];
  it.each(options)('resolves once the connection is up, with %s', async (_, clientOptions) => {
    const client = new Redis(viaProxy(redisUrl as string, proxy), clientOptions);
    client.on('error', () => {});
    clients.push(client);
    expect(client.status).not.toBe('ready');
    const { error } = await readyOutcome(createRedisOAuthStore({ client, prefix: `${uniqueName('startup')}:` }));
    expect(error).toBeUndefined();
    expect(client.status).toBe('ready');
  });
});


describe('ready() with a store that is really down', () => {
  it('names the Redis address and ECONNREFUSED, without the password, well within the start deadline', async () => {
    const port = await freePort();
    const client = new Redis(`redis://:hunter2-secret@127.0.0.1:${port}`, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    try {
      const { error, ms } = await readyOutcome(createRedisOAuthStore({ client }));
      expect(error).toBeInstanceOf(OAuthUnavailableError);
      const text = causes(error).map((e) => e.message).join(' | ');
      expect(text).toContain(`Redis at 127.0.0.1:${port} refused the connection (ECONNREFUSED)`);
      expect(text).not.toContain('hunter2');
      expect(ms).toBeLessThan(START_DEADLINE_MS);
    } finally {
      client.disconnect();
    }
  });

  it('names the Redis Cluster nodes and ECONNREFUSED', async () => {
    const port = await freePort();
    const client = new Cluster([{ host: '127.0.0.1', port }], { enableOfflineQueue: false, clusterRetryStrategy: () => 100 });
    client.on('error', () => {});
    try {
      const { error, ms } = await readyOutcome(createRedisOAuthStore({ client }));
      expect(causes(error).map((e) => e.message).join(' | ')).toContain(`Redis Cluster at 127.0.0.1:${port} refused the connection (ECONNREFUSED)`);
      expect(ms).toBeLessThan(START_DEADLINE_MS);
    } finally {
      client.disconnect();
    }
  });

  describePostgres('on PostgreSQL', () => {
    it('names the PostgreSQL address and ECONNREFUSED, without the password', async () => {
      const port = await freePort();
      const pool = new pg.Pool({ connectionString: `postgres://postgres:hunter2-secret@127.0.0.1:${port}/test`, connectionTimeoutMillis: 1000 });
      pool.on('error', () => {});
      try {
        const { error, ms } = await readyOutcome(createPostgresOAuthStore({ pool }));
        const text = causes(error).map((e) => e.message).join(' | ');
        expect(text).toContain(`PostgreSQL at 127.0.0.1:${port}/test refused the connection (ECONNREFUSED)`);
        expect(text).not.toContain('hunter2');
        expect(ms).toBeLessThan(START_DEADLINE_MS);
      } finally {
        await pool.end();
      }
    });
  });
});
