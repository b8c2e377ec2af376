/**
 * A counter damaged in a Redis or a PostgreSQL quota store (docs/quota.md#damaged-data): a key
 * replaced by a hash, a row whose count no longer fits a bigint. The store answers every call of
 * that application and endpoint with a data error. That is no outage: no outage line, no store
 * error in the metrics, other applications' calls running at the same time all pass; the damaged
 * application is held to the local insurance limit, one warning names it and the admin API's
 * reset, and after the reset the store counts it again. The calls that met the damaged day leave
 * no charge on the minute.
 */
import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { createPostgresOAuthStore, type OAuthStore } from '../../src/oauth/store/index.js';
import { createPostgresQuotaStore, createRedisQuotaStore, type QuotaStore } from '../../src/quota/index.js';
import { capturingLogger } from '../support/logger.js';
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
