/**
 * An OAuth store that goes away under load (docs/deployment.md): every failed answer is a 503 in
 * its endpoint's format (RFC 6749 5.2 `temporarily_unavailable` on /oauth, the envelope with
 * code 1 on /openapi/v1), none waits longer than the store deadline, the log gets one warning and
 * one recovery notice per outage, and the service heals with no restart. A refresh chain that
 * met the outage goes on with the refresh token it holds (RFC 6749 6).
 *
 * The store's connection runs through a local TCP proxy that either resets every connection or
 * holds every packet (a partition), then lets traffic through again.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Response } from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPostgresOAuthStore, createRedisOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { capturingLogger } from '../support/logger.js';
import { databaseUrl, describePostgres, describeRedis, redisUrl, uniqueName } from '../support/services.js';
import { hostPort, startTcpProxy, viaProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { authorizationCode, bearer, CONFIDENTIAL, closeHosts, exchange, ping, startHost, type QuotaHost } from './quota-helpers.js';

const DEADLINE_MS = 500;
/** Scheduling slack on a busy machine; an answer that waited for the store would take the whole outage. */
const MARGIN_MS = 1000;
const WORKERS = 10;
const OUTAGE_MS = 2500;

interface Grant {
  access: string;
  refresh: string;
}

interface Tally {
  requests: number;
  unavailable: number;
  otherFailures: string[];
  slowestMs: number;
  grantsLost: number;
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

async function grant(host: QuotaHost): Promise<Grant> {
  const code = await authorizationCode(host, CONFIDENTIAL, { scope: 'openid profile offline_access' });
  const res = await exchange(host, CONFIDENTIAL, code);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { access: res.body.access_token as string, refresh: res.body.refresh_token as string };
}

function refresh(host: QuotaHost, token: string): Promise<Response> {
  return host
    .http()
    .post('/oauth/token')
    .set({ 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CONFIDENTIAL.id, CONFIDENTIAL.secret) })
    .send(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString());
}

function userinfo(host: QuotaHost, token: string): Promise<Response> {
  return host.http().get('/oauth/userinfo').set(bearer(token));
}

type Kind = 'ping' | 'userinfo' | 'refresh';

/** Checks one answer; a 503 must be in its endpoint's format. */
function record(tally: Tally, kind: Kind, res: Response, ms: number): void {
  tally.requests++;
  tally.slowestMs = Math.max(tally.slowestMs, ms);
  const type = String(res.headers['content-type'] ?? '');
  if (res.status === 200) return;
  if (res.status === 503 && type.startsWith('application/json')) {
    const body = res.body as Record<string, unknown>;
    const right = kind === 'ping' ? body.code === 1 && typeof body.message === 'string' : body.error === 'temporarily_unavailable';
    if (right && res.headers['retry-after'] === '1') {
      tally.unavailable++;
      return;
    }
  }
  if (kind === 'refresh' && res.status === 400 && (res.body as { error?: string }).error === 'invalid_grant') tally.grantsLost++;
  tally.otherFailures.push(`${kind} ${res.status} ${type} ${res.text.slice(0, 120)}`);
}

/** One worker: ping, userinfo, refresh in turn until `until()` says stop; keeps its grant's latest tokens. */
async function worker(host: QuotaHost, held: Grant, tally: Tally, stop: () => boolean): Promise<void> {
  const kinds: Kind[] = ['ping', 'userinfo', 'refresh'];
  for (let i = 0; !stop() && i < 2000; i++) {
    const kind = kinds[i % 3]!;
    const started = performance.now();
    const res = kind === 'ping' ? await ping(host, held.access) : kind === 'userinfo' ? await userinfo(host, held.access) : await refresh(host, held.refresh);
    record(tally, kind, res, performance.now() - started);
    if (kind === 'refresh' && res.status === 200) {
      held.access = res.body.access_token as string;
      held.refresh = res.body.refresh_token as string;
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Setup {
  store: OAuthStore;
  proxy: TcpProxy;
  teardown(): Promise<void>;
}

type Fault = 'reset' | 'partition';

function describeFaults(label: string, suite: typeof describeRedis, faults: Fault[], setup: () => Promise<Setup>): void {
  suite(`OAuth store faults under load: ${label}`, () => {
    let s: Setup;
    beforeAll(async () => {
      s = await setup();
    });
    afterAll(async () => {
      await closeHosts();
      await s?.teardown();
    });

    for (const fault of faults) {
      it(`a ${fault} of the store answers 503s, logs one warning and one recovery, and heals with every grant kept`, async () => {
        const logger = capturingLogger();
        // The client-authentication limit is not under test here (each refresh reserves on it).
        const host = await startHost('express', { quota: {}, logger, oauth: { store: s.store, storeTimeoutMs: DEADLINE_MS, bruteForce: { clientAuthFailures: 100_000 } } });
        const grants: Grant[] = [];
        for (let i = 0; i < WORKERS; i++) grants.push(await grant(host));
        const before = logger.records.length;

        const tally: Tally = { requests: 0, unavailable: 0, otherFailures: [], slowestMs: 0, grantsLost: 0 };
        let stopping = false;
        const running = grants.map((held) => worker(host, held, tally, () => stopping));
        await sleep(500);
        if (fault === 'reset') s.proxy.cut();
        else s.proxy.partition();
        await sleep(OUTAGE_MS);
        s.proxy.resume();
        // Bounded: the store is back within a few seconds, and the workers run on until then.
        for (let i = 0; i < 100 && (await ping(host, grants[0]!.access)).status !== 200; i++) await sleep(100);
        await sleep(1000);
        stopping = true;
        await Promise.all(running);

        // Every chain goes on with the refresh token it holds: none was lost to the outage.
        for (const held of grants) {
          const res = await refresh(host, held.refresh);
          if (res.status !== 200) tally.grantsLost++;
          else expect((await ping(host, res.body.access_token as string)).status).toBe(200);
        }
        console.info(
          `${label} ${fault}: ${tally.requests} requests, ${tally.unavailable} 503, ${tally.otherFailures.length} other failures, ` +
            `slowest ${Math.round(tally.slowestMs)} ms, ${tally.grantsLost} grants lost`,
        );
        expect(tally.otherFailures).toEqual([]);
        expect(tally.grantsLost).toBe(0);
        expect(tally.unavailable).toBeGreaterThan(0);
        expect(tally.slowestMs).toBeLessThan(DEADLINE_MS + MARGIN_MS);

        const logged = logger.records.slice(before).filter((r) => r.level !== 'debug');
        expect(logged.map((r) => `${r.level}: ${r.message}`)).toEqual([
          expect.stringMatching(/^warn: OAuth store( \(\w+\))? unavailable: answering 503 until it is back$/),
          expect.stringMatching(/^info: OAuth store( \(\w+\))? available again$/),
        ]);
        expect(logger.text()).not.toContain(CONFIDENTIAL.secret);
        await host.close();
      }, 45_000);
    }
  });
}

describeFaults('Redis', describeRedis, ['reset', 'partition'], async () => {
  const proxy = await startTcpProxy(hostPort(redisUrl!, 6379));
  const prefix = `${uniqueName('oauthfaults')}:`;
  const client = new Redis(viaProxy(redisUrl!, proxy));
  client.on('error', () => {});
  return {
    proxy,
    store: createRedisOAuthStore({ client, prefix }),
    async teardown() {
      const direct = new Redis(redisUrl!);
      let cursor = '0';
      do {
        const [next, keys] = await direct.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length > 0) await direct.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await direct.quit();
      client.disconnect();
      await proxy.close();
    },
  };
});

describeFaults('PostgreSQL', describePostgres, ['reset'], async () => {
  const proxy = await startTcpProxy(hostPort(databaseUrl!, 5432));
  const schema = uniqueName('oauthfaults');
  const pool = new pg.Pool({ connectionString: viaProxy(databaseUrl!, proxy), max: 8 });
  pool.on('error', () => {});
  return {
    proxy,
    store: createPostgresOAuthStore({ pool, schema }),
    async teardown() {
      await proxy.close();
      await pool.end().catch(() => undefined);
      const direct = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      await direct.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await direct.end();
    },
  };
});
