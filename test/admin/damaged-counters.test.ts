/**
 * A counter damaged in a Redis or a PostgreSQL quota store (docs/quota.md#damaged-data): a key
 * replaced by a hash, a row whose count no longer fits a bigint. The store answers every call of
 * that application and endpoint with a data error. That is no outage: no outage line, no store
 * error in the metrics, other applications' calls running at the same time all pass; the damaged
 * application is held to the local insurance limit, one warning names it and the admin API's
 * reset, and after the reset the store counts it again. The calls that met the damaged day leave
 * no charge on the minute.
 */
import express from 'express';
import Fastify from 'fastify';
import pg from 'pg';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { courierPlatform as expressPlatform } from '../../adapters/express.js';
import { courierPlatform as fastifyPlatform } from '../../adapters/fastify.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import { createPostgresOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { createMemoryQuotaStore, createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { fastifyListener } from '../support/apps.js';
import { capturingLogger } from '../support/logger.js';
import { serve, type Served } from '../support/net.js';
import { databaseUrl, describePostgres, describeRedis, redisForBlock, uniqueName } from '../support/services.js';
import { accessToken, closeHosts, CONFIDENTIAL, OTHER, PING, ping, startHost } from '../http/quota-helpers.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
/** The damaged application may call PING 5 times a minute; everybody else far more. */
const LIMIT = 5;

afterEach(closeHosts);

/** The damaged application's minute use of PING, as the admin API reads it from the store. */
async function storedMinute(h: Awaited<ReturnType<typeof startHost>>): Promise<number | undefined> {
  const usage = await h.http().get(`/admin/usage?client_id=${CONFIDENTIAL.id}`).set(OPERATOR);
  expect(usage.status, usage.text).toBe(200);
  const endpoint = (usage.body.data.endpoints as { api_path: string; periods: { period: string; used: number }[] }[]).find((e) => e.api_path === PING);
  return endpoint?.periods.find((p) => p.period === 'minute')?.used;
}

async function damagedCounter(store: QuotaStore, damage: () => Promise<void>, oauth: { store?: OAuthStore } = {}) {
  const logger = capturingLogger();
  const h = await startHost('express', {
    logger,
    oauth,
    quota: { store, rules: [{ scope: 'client', clientId: CONFIDENTIAL.id, apiPath: PING, minute: LIMIT }, { scope: 'global', apiPath: PING, minute: 100_000 }] },
    platform: { admin: { token: TOKEN } },
  });
  const damaged = (await accessToken(h, CONFIDENTIAL)).token;
  const other = (await accessToken(h, OTHER)).token;
  expect((await ping(h, damaged)).status).toBe(200);
  expect(await storedMinute(h)).toBe(1);
  await damage();

  // At the same time: 16 callers of the other application and 4 of the damaged one, 10 calls each.
  const callers = (count: number, token: string) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) statuses.push((await ping(h, token)).status);
        return statuses;
      }),
    ).then((all) => all.flat().sort());
  const [others, own] = await Promise.all([callers(16, other), callers(4, damaged)]);
  expect(others).toEqual(Array(160).fill(200));
  // The insurance limit starts from the store's last count (1 of 5): 4 more pass.
  expect(own).toEqual([...Array(4).fill(200), ...Array(36).fill(429)]);
  // The store counted none of the 40 calls it could not count: the minute still holds the one
  // call before the damage, not a charge for each call that met the damaged day.
  expect(await storedMinute(h)).toBe(1);

  expect(logger.records.filter((r) => /unavailable/.test(r.message))).toEqual([]);
  const quotaLines = () => logger.records.filter((r) => (r.level === 'warn' || r.level === 'error') && r.message.startsWith('quota'));
  const warnings = quotaLines();
  expect(warnings.map((r) => r.message)).toEqual([expect.stringContaining(`a counter of "${CONFIDENTIAL.id}" on ${PING} is damaged`)]);
  expect(warnings[0]!.message).toContain(`DELETE /admin/usage?client_id=${CONFIDENTIAL.id}&api_path=${encodeURIComponent(PING)}`);
  const metrics = await h.http().get('/admin/metrics').set(OPERATOR);
  expect(metrics.text).not.toMatch(/^courier_platform_store_errors_total\{store="quota store"\} [1-9]/m);

  // The reset the warning names repairs it: the store counts the application again.
  const reset = await h.http().delete(`/admin/usage?client_id=${CONFIDENTIAL.id}&api_path=${encodeURIComponent(PING)}`).set(OPERATOR);
  expect([reset.status, reset.body.data?.endpoints]).toEqual([200, 1]);
  for (let i = 0; i < 3; i++) expect((await ping(h, damaged)).status).toBe(200);
  expect(await storedMinute(h)).toBe(3);
  expect(quotaLines()).toHaveLength(1);

  // Damaged again: the insurance limit starts from the store's count since the reset (3 of 5),
  // not from what it counted before it.
  await damage();
  const again: number[] = [];
  for (let i = 0; i < 4; i++) again.push((await ping(h, damaged)).status);
  expect(again).toEqual([200, 200, 429, 429]);
}

describeRedis('a damaged counter in a Redis quota store', () => {
  const { client, prefix } = redisForBlock('damaged_counter');

  it('a counter key that holds a hash (WRONGTYPE) is no outage: others pass, the application is held to the insurance limit, the reset repairs it', async () => {
    await damagedCounter(createRedisQuotaStore({ client, prefix }), async () => {
      const [day] = await client.keys(`{${prefix}:${CONFIDENTIAL.id}:${PING}}:day:*`);
      expect(day).toBeDefined();
      await client.del(day!);
      await client.hset(day!, 'x', '1');
    });
  });

  it('a counter key that holds a string that is not an integer is no outage either, and leaves no charge on the minute', async () => {
    const own = `${prefix}:string`;
    await damagedCounter(createRedisQuotaStore({ client, prefix: own }), async () => {
      const [day] = await client.keys(`{${own}:${CONFIDENTIAL.id}:${PING}}:day:*`);
      expect(day).toBeDefined();
      await client.set(day!, 'twelve', 'KEEPTTL');
    });
  });
});

describePostgres('a damaged counter in a PostgreSQL quota store', () => {
  // Two connections for the quota and the OAuth store: calls wait for one while the damaged call fails.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => {});
  const schema = uniqueName('damaged_counter');
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('a count that no longer fits a bigint (22003) is no outage: others pass, the application is held to the insurance limit, the reset repairs it', async () => {
    const store = createPostgresQuotaStore({ pool, schema });
    await damagedCounter(store, async () => {
      const updated = await pool.query(`UPDATE ${store.tableName} SET used = 9223372036854775807 WHERE client_id = $1 AND api_path = $2 AND period = 'day'`, [CONFIDENTIAL.id, PING]);
      expect(updated.rowCount).toBe(1);
    }, { store: createPostgresOAuthStore({ pool, schema }) });
  });
});

describe('the reset a damaged counter\'s warning names', () => {
  const APP = 'app_mounted';
  const served: Served[] = [];
  afterEach(async () => {
    await Promise.all(served.splice(0).map((s) => s.close()));
  });

  /** A memory store whose every consume answers as a damaged record does; its usage (and reset) is the memory store's. */
  function damagedStore(): QuotaStore {
    const { consumeSync: _inProcess, ...memory } = createMemoryQuotaStore();
    return {
      ...memory,
      kind: 'damaged',
      consume: async () => {
        throw new SyntaxError('Unexpected token h in JSON at position 0');
      },
    };
  }

  function options(logger: ReturnType<typeof capturingLogger>, admin: CourierPlatformOptions['admin']) {
    return {
      logger,
      courier: false as const,
      oauth: false as const,
      admin,
      quota: { store: damagedStore(), verifyToken: (token: string) => (token === 'app-token' ? { clientId: APP, scope: [] } : undefined) },
    };
  }

  async function pingAndWarning(server: Served, logger: ReturnType<typeof capturingLogger>): Promise<string> {
    const call = await request(server.server).get(PING).set('authorization', 'Bearer app-token');
    expect(call.status).toBe(200); // admitted under the insurance limit
    const warnings = logger.records.filter((r) => r.level === 'warn' && r.message.includes('is damaged'));
    expect(warnings).toHaveLength(1);
    return warnings[0]!.message;
  }

  const reset = `client_id=${APP}&api_path=${encodeURIComponent(PING)}`;

  it('names the admin API where the host mounted it (Express app.use under /ops, admin.basePath /operator), and that path resets the counter', async () => {
    const logger = capturingLogger();
    const app = express();
    const platform = expressPlatform(options(logger, { token: TOKEN, basePath: '/operator' }));
    app.use('/ops', platform);
    app.get(PING, platform.quota(), (_req, res) => {
      res.json({ ok: true });
    });
    const server = await serve(app);
    served.push(server);
    // The operator's first look at the application's usage, where the admin API answers.
    expect((await request(server.server).get(`/ops/operator/usage?client_id=${APP}`).set(OPERATOR)).status).toBe(200);

    const warning = await pingAndWarning(server, logger);
    expect(warning).toContain(`the admin API's DELETE /ops/operator/usage?${reset} resets its counters`);
    const deleted = await request(server.server).delete(`/ops/operator/usage?${reset}`).set(OPERATOR);
    expect(deleted.status).toBe(200);
  });

  it('names the admin API under the Fastify register prefix', async () => {
    const logger = capturingLogger();
    const app = Fastify();
    const platform = fastifyPlatform(options(logger, { token: TOKEN }));
    app.register(platform, { prefix: '/api' });
    app.get(PING, { preHandler: platform.quota() }, async () => ({ ok: true }));
    const server = await serve(fastifyListener(app as never));
    served.push(server);
    expect((await request(server.server).get(`/api/admin/usage?client_id=${APP}`).set(OPERATOR)).status).toBe(200);

    expect(await pingAndWarning(server, logger)).toContain(`the admin API's DELETE /api/admin/usage?${reset} resets its counters`);
  });

  it('before the platform answered any request of this process, names the path below its mount point as such', async () => {
    const logger = capturingLogger();
    const app = express();
    const platform = expressPlatform(options(logger, { token: TOKEN }));
    app.use('/ops', platform);
    app.get(PING, platform.quota(), (_req, res) => {
      res.json({ ok: true });
    });
    const server = await serve(app);
    served.push(server);

    expect(await pingAndWarning(server, logger)).toContain(`the admin API's DELETE /admin/usage?${reset} (below the path the platform is mounted on) resets its counters`);
  });

  it('with the admin API off, names the quota store\'s own reset', async () => {
    const logger = capturingLogger();
    const app = express();
    const platform = expressPlatform(options(logger, false));
    app.use(platform);
    app.get(PING, platform.quota(), (_req, res) => {
      res.json({ ok: true });
    });
    const server = await serve(app);
    served.push(server);

    const warning = await pingAndWarning(server, logger);
    expect(warning).not.toContain('DELETE');
    expect(warning).toContain(`the quota store's usage.reset(${JSON.stringify(APP)}, ${JSON.stringify(PING)}) resets its counters`);
  });
});
