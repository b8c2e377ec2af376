/**
 * The quota guard over HTTP while its Redis store is cut (a TCP proxy drops the connection), with
 * onStoreError 'closed' and 'open' (docs/quota.md), on Express.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import type { QuotaOptions } from '../../src/options.js';
import { createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { capturingLogger } from '../support/logger.js';
import { describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { hostPort, startTcpProxy, viaProxy, type TcpProxy } from '../support/tcp-proxy.js';
import {
  CONFIDENTIAL,
  PING,
  accessToken,
  closeHosts,
  getQuota,
  ping,
  postOrder,
  startHost,
  usedOf,
  type QuotaHost,
} from './quota-helpers.js';

describeRedis('quota over HTTP when the Redis store is cut (express)', () => {
  let proxy: TcpProxy;
  let viaProxyClient: Redis;
  let directClient: Redis;
  const prefix = uniqueName('quota_http');

  beforeAll(async () => {
    const url = redisUrl as string;
    proxy = await startTcpProxy(hostPort(url, 6379));
    viaProxyClient = new Redis(viaProxy(url, proxy), {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: 300,
      retryStrategy: () => 25,
    });
    viaProxyClient.on('error', () => {}); // reconnection errors are expected while cut
    await new Promise<void>((resolve, reject) => {
      viaProxyClient.once('ready', () => resolve());
      setTimeout(() => reject(new Error('redis via the proxy is not ready')), 5000).unref();
    });
    directClient = new Redis(url, { maxRetriesPerRequest: 1 });
  });

  /** Until the proxied connection is up again (after a cut), so each test starts with a working store. */
  async function redisReady(): Promise<void> {
    await vi.waitFor(() => expect(viaProxyClient.status).toBe('ready'), { timeout: 5_000, interval: 25 });
  }

  afterEach(async () => {
    proxy?.resume();
    await closeHosts();
  });

  beforeEach(redisReady);

  afterAll(async () => {
    viaProxyClient?.disconnect();
    await proxy?.close();
    if (directClient) {
      let cursor = '0';
      do {
        const [next, keys] = await directClient.scan(cursor, 'MATCH', `{${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await directClient.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await directClient.quit();
    }
  });

  const storeFor = (label: string): QuotaStore => createRedisQuotaStore({ client: viaProxyClient, prefix: `${prefix}_${label}` });

  /** Until get_quota (free) answers from the store again; at most 5 s. */
  async function waitForStore(host: QuotaHost, token: string): Promise<void> {
    await vi.waitFor(async () => expect((await getQuota(host, token, PING)).status).toBe(200), { timeout: 5_000, interval: 25 });
  }

  it("onStoreError 'closed': 503 code 1 while cut (never 500), the store is used again once it is back", async () => {
    const logger = capturingLogger();
    const quota: QuotaOptions = { store: storeFor('closed'), onStoreError: 'closed', storeTimeoutMs: 200, defaults: { minute: 3 } };
    const host = await startHost('express', { quota, logger });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]);

    proxy.cut();
    for (const res of [await ping(host, token), await postOrder(host, token), await getQuota(host, token, PING)]) {
      expect(res.status, res.text).toBe(503);
      expect(res.body).toMatchObject({ code: 1 });
      expect(res.body.message).toMatch(/\S/);
    }
    expect(host.handled).toEqual(['ping']);
    const quotaWarnings = logger.records.filter((r) => r.level === 'warn' && /quota/.test(r.message));
    expect(quotaWarnings.map((r) => r.message)).toEqual([expect.stringMatching(/quota store unavailable/)]); // once per outage

    proxy.resume();
    await waitForStore(host, token);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]);
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([2, 2, 2]);
    expect(host.handled).toEqual(['ping', 'ping']);
  });

  it("onStoreError 'open': the insurance limiter admits what is left of the minute the store reported, then 429; the store is used again once it is back", async () => {
    const quota: QuotaOptions = { store: storeFor('open'), onStoreError: 'open', storeTimeoutMs: 200, defaults: { minute: 3 } };
    const host = await startHost('express', { quota, logger: capturingLogger() });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]);

    proxy.cut();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await ping(host, token)).status);
    expect(statuses).toEqual([200, 200, 429]); // the store had counted 1 of 3 this minute
    const rejected = await ping(host, token);
    expect(rejected.status).toBe(429);
    expect(rejected.body).toMatchObject({ code: 1, data: { api_path: PING, period: 'minute' } });
    expect(Number(rejected.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(host.handled).toHaveLength(3);

    proxy.resume();
    await waitForStore(host, token);
    expect(await usedOf(host, token, PING)).toEqual([1, 1, 1]); // the outage's calls never reached the store
    expect((await ping(host, token)).status).toBe(200);
    expect(await usedOf(host, token, PING)).toEqual([2, 2, 2]);
  });
});
