/**
 * The shared stores cut under load (docs/deployment.md#when-a-store-is-down). The OAuth store and
 * the quota store each reach Redis or PostgreSQL through a local TCP proxy; workers keep calling a
 * guarded route, userinfo and the refresh grant while the quota store alone, then both stores,
 * are cut by a reset (connections dropped, new ones refused) or by a partition (every byte held),
 * and then restored.
 *
 * What a user would notice, counted per run and printed as one line: no 500 and no framework
 * page (every failure a 503 in the endpoint's own format), no answer later than the deadline
 * plus a margin, no grant lost (each refresh chain refreshes again after the outage, retrying
 * with the token it holds), no admission past a limit that was already reached before the cut,
 * one warning per store and outage and one notice when it is over.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { LogFields, Logger } from '../../src/core/logger.js';
import { createPostgresOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { scanKeys } from '../support/redis-cluster.js';
import { hostPort, startTcpProxy, viaProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { authorizationCode, CONFIDENTIAL, closeHosts, exchange, OTHER, ORDERS, PING, START, startHost, type QuotaHost, type TestClock } from './quota-helpers.js';

const DEADLINE_MS = 300;
/** An answer later than the deadline by more than this is slow. */
const MARGIN_MS = 700;
const ORDER_LIMIT = 5;
/** Answers of every kind a phase waits for once what starts it has shown (a warning, the notices). */
const PER_PHASE = 3;
/** A phase that has not shown what it waits for by then has failed. */
const PHASE_LIMIT_MS = 15_000;

interface Stores {
  oauth: OAuthStore;
  quota: QuotaStore;
  oauthProxy: TcpProxy;
  quotaProxy: TcpProxy;
  teardown(): Promise<void>;
}

interface Answer {
  kind: 'ping' | 'order' | 'userinfo' | 'refresh';
  status: number;
  ms: number;
  contentType: string;
  body: Record<string, unknown> | undefined;
}

function recordingLogger(): Logger & { lines: { level: string; message: string; error?: string }[] } {
  const lines: { level: string; message: string; error?: string }[] = [];
  const log = (level: string) => (fields: LogFields, message: string) => {
    const error = (fields as { err?: unknown }).err;
    lines.push({ level, message, ...(error instanceof Error ? { error: error.message } : {}) });
  };
  return { lines, debug: () => {}, info: log('info'), warn: log('warn'), error: log('error') };
}

async function call(host: QuotaHost, kind: Answer['kind'], init: { path: string; method?: string; headers: Record<string, string>; body?: string }): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${host.origin}${init.path}`, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: Record<string, unknown> | undefined;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  return { kind, status: res.status, ms: performance.now() - started, contentType: res.headers.get('content-type') ?? '', body };
}

const basic = (client: { id: string; secret: string }) => `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;

async function tokensOf(host: QuotaHost, client: typeof CONFIDENTIAL, user: 'alice' | 'bob'): Promise<{ access: string; refresh: string }> {
  const code = await authorizationCode(host, client, { user, scope: 'openid offline_access' });
  const res = await exchange(host, client, code);
  expect(res.status, res.text).toBe(200);
  return { access: res.body.access_token as string, refresh: res.body.refresh_token as string };
}

/** A clock that runs in real time from the instant last `set`. */
function movingClock(): TestClock {
  let origin = START;
  let started = performance.now();
  const now = () => origin + Math.floor(performance.now() - started);
  return {
    now,
    iso: () => new Date(now()).toISOString(),
    advance(ms) {
      origin += ms;
    },
    set(ms) {
      origin = ms;
      started = performance.now();
    },
  };
}

const clock = movingClock();

function describeCut(name: string, suite: (name: string, body: () => void) => void, setup: () => Promise<Stores>): void {
  suite(`stores cut under load: ${name}`, () => {
    let stores: Stores;
    beforeAll(async () => {
      stores = await setup();
    });
    afterAll(async () => {
      await closeHosts();
      await stores?.teardown();
    });

    for (const [run, fault] of (['reset', 'partition'] as const).entries()) {
      it(`${fault}: every failure is a 503 in its endpoint's format within the deadline, no grant is lost, no limit is exceeded, one warning and one notice per store`, async () => {
        const logger = recordingLogger();
        // Real time, in an hour of its own so the runs' counters do not meet; the stores read it too.
        clock.set(START + run * 3_600_000);
        const host = await startHost('express', {
          logger,
          clock,
          oauth: { store: stores.oauth, storeTimeoutMs: DEADLINE_MS },
          quota: {
            store: stores.quota,
            onStoreError: 'open',
            storeTimeoutMs: DEADLINE_MS,
            defaults: { minute: 1_000_000, day: 10_000_000 },
            rules: [{ scope: 'global', apiPath: ORDERS, minute: ORDER_LIMIT }],
          },
        });
        const chains = await Promise.all([
          tokensOf(host, CONFIDENTIAL, 'alice'),
          tokensOf(host, CONFIDENTIAL, 'bob'),
          tokensOf(host, OTHER, 'alice'),
          tokensOf(host, OTHER, 'bob'),
        ]);
        // Refreshing retires a chain's access tokens, so the readers hold a grant nobody refreshes.
        const reader = (await tokensOf(host, OTHER, 'alice')).access;
        // An application that spent its minute on orders before the cut.
        const spender = (await tokensOf(host, CONFIDENTIAL, 'bob')).access;
        for (let i = 0; i < ORDER_LIMIT; i += 1) {
          const res = await call(host, 'order', { path: ORDERS, method: 'POST', headers: { authorization: `Bearer ${spender}`, 'content-type': 'application/json' }, body: '{}' });
          expect(res.status).toBe(200);
        }
        const handledBefore = host.handled.filter((h) => h === 'orders').length;

        const logFrom = logger.lines.length;
        const answers: Answer[] = [];
        const clients = [CONFIDENTIAL, CONFIDENTIAL, OTHER, OTHER];
        let running = true;
        const loop = async (next: () => Promise<Answer>) => {
          for (let i = 0; running && i < 5000; i += 1) answers.push(await next());
        };
        const refreshLoop = async (chain: number) => {
          for (let i = 0; running && i < 5000; i += 1) {
            const answer = await call(host, 'refresh', {
              path: '/oauth/token',
              method: 'POST',
              headers: { authorization: basic(clients[chain]!), 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: chains[chain]!.refresh }).toString(),
            });
            answers.push(answer);
            // A 503 leaves the client holding the token it sent: it retries with that one.
            if (answer.status === 200) chains[chain]!.refresh = answer.body!.refresh_token as string;
            else if (answer.status !== 503) return;
          }
        };
        const workers = [
          loop(() => call(host, 'ping', { path: PING, headers: { authorization: `Bearer ${reader}` } })),
          loop(() => call(host, 'ping', { path: PING, headers: { authorization: `Bearer ${reader}` } })),
          loop(() => call(host, 'userinfo', { path: '/oauth/userinfo', headers: { authorization: `Bearer ${reader}` } })),
          loop(() => call(host, 'order', { path: ORDERS, method: 'POST', headers: { authorization: `Bearer ${spender}`, 'content-type': 'application/json' }, body: '{}' })),
          ...chains.map((_, i) => refreshLoop(i)),
        ];

        const cut = (proxy: TcpProxy) => (fault === 'reset' ? proxy.cut() : proxy.partition());
        const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        // Each phase lasts until what it is there to show has been seen, not for a fixed time: the
        // warning (or notice) that starts it, then PER_PHASE more answers of every kind.
        const kinds = ['ping', 'userinfo', 'order', 'refresh'] as const;
        const until = (what: string, ready: () => boolean) =>
          vi.waitFor(
            () => {
              if (!ready()) throw new Error(`still waiting for ${what}; answers so far: ${answers.length}`);
            },
            { timeout: PHASE_LIMIT_MS, interval: 20 },
          );
        const logs = (level: string, message: string) => logger.lines.slice(logFrom).some((line) => line.level === level && line.message.startsWith(message));
        const answersOfEveryKind = async (what: string, ok: readonly Answer['kind'][] = []) => {
          const from = answers.length;
          await until(`${PER_PHASE} answers of every kind ${what}`, () => {
            const since = answers.slice(from);
            return (
              kinds.every((kind) => since.filter((a) => a.kind === kind).length >= PER_PHASE) &&
              ok.every((kind) => since.some((a) => a.kind === kind && a.status === 200))
            );
          });
        };
        await answersOfEveryKind('before the cut', ['ping', 'userinfo', 'refresh']);
        cut(stores.quotaProxy);
        await until('the quota store warning', () => logs('warn', 'quota store unavailable'));
        await answersOfEveryKind('with the quota store cut');
        cut(stores.oauthProxy);
        await until('the OAuth store warning', () => logs('warn', `OAuth store (${name}) unavailable`));
        await answersOfEveryKind('with both stores cut');
        stores.quotaProxy.resume();
        stores.oauthProxy.resume();
        await until('both notices', () => logs('info', 'quota store available again') && logs('info', `OAuth store (${name}) available again`));
        await answersOfEveryKind('after the stores are back', ['ping', 'userinfo', 'refresh']);
        // Long enough for a call issued after the recovery to be judged silent (twice the
        // deadline), so its answer is among those checked below. (A second outage this soon after
        // the warning is a relapse and logs nothing: docs/stores.md#deadlines-and-outages.)
        await pause(2 * DEADLINE_MS);
        running = false;
        await Promise.all(workers);

        // After the outage every chain refreshes again with the token it holds.
        const lost: string[] = [];
        for (const [i, chain] of chains.entries()) {
          const res = await call(host, 'refresh', {
            path: '/oauth/token',
            method: 'POST',
            headers: { authorization: basic(clients[i]!), 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: chain.refresh }).toString(),
          });
          if (res.status !== 200) lost.push(`chain ${i}: ${res.status} ${JSON.stringify(res.body)}`);
        }

        const unavailable = answers.filter((a) => a.status === 503);
        const report = {
          store: name,
          fault,
          requests: answers.length,
          ok: answers.filter((a) => a.status === 200).length,
          '503': unavailable.length,
          other5xx: answers.filter((a) => a.status >= 500 && a.status !== 503).length,
          slow: answers.filter((a) => a.ms > DEADLINE_MS + MARGIN_MS).length,
          slowestMs: Math.round(Math.max(...answers.map((a) => a.ms))),
          grantsLost: lost.length,
          extraAdmissions: host.handled.filter((h) => h === 'orders').length - handledBefore,
        };
        console.info(`store cut: ${JSON.stringify(report)}`);

        expect(unavailable.length, 'the cut was felt').toBeGreaterThan(0);
        expect(answers.filter((a) => a.status === 200 && a.kind !== 'order').length, 'calls were served').toBeGreaterThan(0);
        for (const answer of answers) {
          const allowed = answer.kind === 'order' ? [429, 503] : answer.kind === 'refresh' ? [200, 503] : [200, 503];
          expect(allowed, `${answer.kind} answered ${answer.status}`).toContain(answer.status);
          expect(answer.contentType, `${answer.kind} ${answer.status}`).toMatch(/^application\/json/);
        }
        for (const answer of unavailable) {
          if (answer.kind === 'ping' || answer.kind === 'order') expect(answer.body).toMatchObject({ code: 1, data: null });
          else expect(answer.body).toMatchObject({ error: 'temporarily_unavailable' });
        }
        expect(report.slow, `answers later than ${DEADLINE_MS + MARGIN_MS} ms (slowest ${report.slowestMs} ms)`).toBe(0);
        expect(lost).toEqual([]);
        expect(report.extraAdmissions).toBe(0);

        const logged = logger.lines.slice(logFrom);
        const warned = logged.filter((line) => line.level === 'warn' || line.level === 'error');
        const warnings = warned.map((line) => line.message);
        const seen = JSON.stringify(warned);
        const notices = logged.filter((line) => line.level === 'info').map((line) => line.message);
        expect(warnings.filter((m) => m.startsWith('quota store unavailable')), seen).toHaveLength(1);
        expect(warnings.filter((m) => m.startsWith(`OAuth store (${name}) unavailable`)), seen).toHaveLength(1);
        expect(warnings, seen).toHaveLength(2);
        expect(notices.filter((m) => m === 'quota store available again')).toHaveLength(1);
        expect(notices.filter((m) => m === `OAuth store (${name}) available again`)).toHaveLength(1);
        await host.close();
      }, 30_000);
    }
  });
}

describeCut('redis', describeRedis, async () => {
  const url = redisUrl as string;
  const target = hostPort(url, 6379);
  const [oauthProxy, quotaProxy] = await Promise.all([startTcpProxy(target), startTcpProxy(target)]);
  const prefix = uniqueName('store_cut');
  // As docs/deployment.md recommends: the OAuth store on ioredis's defaults, the quota on a
  // connection of its own that fails fast while Redis is away.
  const oauthClient = new Redis(viaProxy(url, oauthProxy), { retryStrategy: () => 50, connectTimeout: 500 });
  const quotaClient = new Redis(viaProxy(url, quotaProxy), {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: () => 50,
    connectTimeout: 500,
  });
  for (const client of [oauthClient, quotaClient]) client.on('error', () => {});
  await Promise.all([oauthClient, quotaClient].map((client) => new Promise<void>((resolve) => client.once('ready', () => resolve()))));
  return {
    oauth: createRedisOAuthStore({ client: oauthClient, prefix: `${prefix}:oauth:`, now: clock.now }),
    quota: createRedisQuotaStore({ client: quotaClient, prefix }),
    oauthProxy,
    quotaProxy,
    async teardown() {
      oauthClient.disconnect();
      quotaClient.disconnect();
      await Promise.all([oauthProxy.close(), quotaProxy.close()]);
      const direct = new Redis(url);
      const keys = await scanKeys(direct, `*${prefix}*`);
      if (keys.length > 0) await direct.del(...keys);
      await direct.quit();
    },
  };
});

describeCut('postgres', describePostgres, async () => {
  const url = databaseUrl as string;
  const target = hostPort(url, 5432);
  const [oauthProxy, quotaProxy] = await Promise.all([startTcpProxy(target), startTcpProxy(target)]);
  const schema = uniqueName('store_cut');
  // Separate pools, each with a short connection timeout and an 'error' listener (docs/deployment.md).
  const oauthPool = new pg.Pool({ connectionString: viaProxy(url, oauthProxy), max: 10, connectionTimeoutMillis: 500 });
  const quotaPool = new pg.Pool({ connectionString: viaProxy(url, quotaProxy), max: 10, connectionTimeoutMillis: 500 });
  for (const pool of [oauthPool, quotaPool]) pool.on('error', () => {});
  const oauth = createPostgresOAuthStore({ pool: oauthPool, schema, now: clock.now });
  const quota = createPostgresQuotaStore({ pool: quotaPool, schema });
  await oauth.migrate();
  await quota.migrate();
  return {
    oauth,
    quota,
    oauthProxy,
    quotaProxy,
    async teardown() {
      await quota.close();
      await Promise.all([oauthPool.end().catch(() => {}), quotaPool.end().catch(() => {})]);
      await Promise.all([oauthProxy.close(), quotaProxy.close()]);
      const direct = new pg.Client({ connectionString: url });
      await direct.connect();
      await direct.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await direct.end();
    },
  };
});
