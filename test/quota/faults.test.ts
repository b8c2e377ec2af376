/**
 * When the shared store is down the guard follows onStoreError (docs/quota.md): 'open' (admit,
 * count locally, warn) or 'closed' (503, code 1); it recovers by itself when the store returns.
 *
 * The store's connection runs through a local TCP proxy the test cuts (every open connection
 * dropped, new ones refused) and resumes. Counters are read back through a second, direct
 * connection, so "the store's counter moves again" is seen from outside.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { LogFields, Logger } from '../../src/core/logger.js';
import {
  createPostgresQuotaStore,
  createQuotaService,
  createRedisQuotaStore,
  guardVerdict,
  type QuotaDecision,
  type QuotaService,
  type QuotaStore,
} from '../../src/quota/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { hostPort, startTcpProxy, viaProxy, type TcpProxy } from '../support/tcp-proxy.js';

const PATH = '/openapi/v1/orders';
const NOW = Date.UTC(2026, 10, 21, 10, 0, 5);

interface Setup {
  /** Talks to the server through the proxy. */
  store: QuotaStore;
  /** Talks to the server directly: the observer. */
  direct: QuotaStore;
  proxy: TcpProxy;
  teardown(): Promise<void>;
}

function recordingLogger(): Logger & { levels: string[] } {
  const levels: string[] = [];
  const log = (level: string) => (_fields: LogFields, _message: string) => levels.push(level);
  return { levels, debug: () => {}, info: log('info'), warn: log('warn'), error: log('error') };
}

/** Never a 500: every decision is a pass, a 429 or a 503. */
function httpStatus(decision: QuotaDecision): number {
  const verdict = guardVerdict(decision);
  return verdict.pass ? 200 : verdict.response.status;
}

async function used(store: QuotaStore, clientId: string): Promise<number[]> {
  const observer = createQuotaService({ store, now: () => NOW, onStoreError: 'closed', logger: recordingLogger() });
  const inspection = await observer.inspect(clientId, PATH);
  if (inspection.outcome !== 'ok') throw inspection.error;
  return inspection.report.periods.map((p) => p.used);
}

/** Until get_quota (which charges nothing) answers from the store again; at most 5 s. */
async function waitForStore(quota: QuotaService): Promise<void> {
  await vi.waitFor(async () => expect((await quota.inspect('probe', PATH)).outcome).toBe('ok'), { timeout: 5_000, interval: 25 });
}

function describeFaults(name: string, suite: (name: string, body: () => void) => void, setup: () => Promise<Setup>): void {
  suite(`quota store faults: ${name}`, () => {
    let s: Setup;
    beforeAll(async () => {
      s = await setup();
    });
    afterAll(async () => {
      await s?.teardown();
    });

    const service = (onStoreError: 'open' | 'closed', logger: Logger) =>
      createQuotaService({
        store: s.store,
        now: () => NOW,
        onStoreError,
        logger,
        storeTimeoutMs: 1000,
        rules: [{ scope: 'global', apiPath: PATH, minute: 3 }],
      });

    it("onStoreError 'open': admits under the insurance limit while cut, warns once, and uses the store again after", async () => {
      const clientId = uniqueName('open');
      const logger = recordingLogger();
      const quota = service('open', logger);
      const statuses: number[] = [];

      const before = await quota.consume(clientId, PATH);
      statuses.push(httpStatus(before));
      expect(before.outcome === 'admitted' && before.source).toBe('store');
      expect(await used(s.direct, clientId)).toEqual([1, 1, 1]);

      s.proxy.cut();
      const during: QuotaDecision[] = [];
      for (let i = 0; i < 4; i++) during.push(await quota.consume(clientId, PATH));
      statuses.push(...during.map(httpStatus));
      expect(during.map((d) => [d.outcome, 'source' in d ? d.source : undefined])).toEqual([
        ['admitted', 'insurance'],
        ['admitted', 'insurance'],
        ['rejected', 'insurance'], // the insurance limiter continues from the store's 1 of 3
        ['rejected', 'insurance'],
      ]);
      const inspection = await quota.inspect(clientId, PATH);
      expect(inspection.outcome).toBe('store_unavailable');
      expect(logger.levels).toEqual(['warn']);
      expect(await used(s.direct, clientId)).toEqual([1, 1, 1]); // nothing reached the store

      s.proxy.resume();
      await waitForStore(quota);
      const after = await quota.consume(clientId, PATH);
      statuses.push(httpStatus(after));
      expect(after.outcome === 'admitted' && after.source).toBe('store');
      expect(await used(s.direct, clientId)).toEqual([2, 2, 2]);
      expect(logger.levels).toEqual(['warn', 'info']);
      expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    });

    it("onStoreError 'closed': answers store_unavailable (503) while cut, and uses the store again after", async () => {
      const clientId = uniqueName('closed');
      const logger = recordingLogger();
      const quota = service('closed', logger);
      expect((await quota.consume(clientId, PATH)).outcome).toBe('admitted');

      s.proxy.cut();
      const during: QuotaDecision[] = [];
      for (let i = 0; i < 3; i++) during.push(await quota.consume(clientId, PATH));
      expect(during.map((d) => d.outcome)).toEqual(['store_unavailable', 'store_unavailable', 'store_unavailable']);
      expect(during.map(httpStatus)).toEqual([503, 503, 503]);
      expect((await quota.inspect(clientId, PATH)).outcome).toBe('store_unavailable');
      expect(logger.levels).toEqual(['warn']);

      s.proxy.resume();
      await waitForStore(quota);
      const after = await quota.consume(clientId, PATH);
      expect(after.outcome === 'admitted' && after.source).toBe('store');
      expect(await used(s.direct, clientId)).toEqual([2, 2, 2]);
      expect(logger.levels).toEqual(['warn', 'info']);
    });
  });
}

describeFaults('redis', describeRedis, async () => {
  const url = redisUrl as string;
  const proxy = await startTcpProxy(hostPort(url, 6379));
  const prefix = uniqueName('quota_faults');
  const viaProxyClient = new Redis(viaProxy(url, proxy), {
    // Fail at once while disconnected, and never re-send a call that was in flight when the
    // connection broke (it would be counted after the guard already fell back).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 500,
    retryStrategy: () => 50,
  });
  viaProxyClient.on('error', () => {}); // reconnection errors are expected here
  await new Promise<void>((resolve, reject) => {
    viaProxyClient.once('ready', () => resolve());
    setTimeout(() => reject(new Error('redis via proxy not ready')), 5000).unref();
  });
  const directClient = new Redis(url, { maxRetriesPerRequest: 1 });
  return {
    proxy,
    store: createRedisQuotaStore({ client: viaProxyClient, prefix }),
    direct: createRedisQuotaStore({ client: directClient, prefix }),
    async teardown() {
      viaProxyClient.disconnect();
      await proxy.close();
      let cursor = '0';
      for (let i = 0; i < 1000; i++) {
        const [next, keys] = await directClient.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await directClient.del(...keys);
        cursor = next;
        if (cursor === '0') break;
      }
      await directClient.quit();
    },
  };
});

describeFaults('postgres', describePostgres, async () => {
  const url = databaseUrl as string;
  const proxy = await startTcpProxy(hostPort(url, 5432));
  const schema = uniqueName('quota_faults');
  const proxied = new pg.Pool({ connectionString: viaProxy(url, proxy), max: 3, connectionTimeoutMillis: 500 });
  proxied.on('error', () => {}); // idle connections cut by the proxy are replaced
  const directPool = new pg.Pool({ connectionString: url, max: 2 });
  directPool.on('error', () => {});
  const direct = createPostgresQuotaStore({ pool: directPool, schema });
  await direct.migrate();
  return {
    proxy,
    store: createPostgresQuotaStore({ pool: proxied, schema, migrate: false }),
    direct,
    async teardown() {
      await proxied.end().catch(() => {});
      await proxy.close();
      await directPool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await directPool.end();
    },
  };
});
