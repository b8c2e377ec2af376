/**
 * `{admin}/usage/history` of an application with a big history on Redis
 * (docs/operator.md#usage-history): hundreds of thousands of fields, far more than a store call
 * may take to answer, read a page at a time on the connection the quota guard and the OAuth store
 * share. The read answers, the guarded calls meanwhile too, and no outage starts.
 */
import { afterEach, expect, it } from 'vitest';
import type { HourCount } from '../../src/history/types.js';
import { createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { createRedisQuotaStore } from '../../src/quota/index.js';
import { capturingLogger } from '../support/logger.js';
import { describeRedis, redisForBlock } from '../support/services.js';
import { accessToken, closeHosts, CONFIDENTIAL, OTHER, ping, startHost, testClock } from '../http/quota-helpers.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
/** Each store call's deadline; a call no round trip of which answers for twice this fails. */
const DEADLINE_MS = 250;
const HOUR = 3_600_000;
/** 600 endpoints called every hour of 30 days: some 430,000 fields, far longer to read at once than twice the deadline (a deadline a loaded machine keeps). */
const ENDPOINTS = 600;
const HOURS = 30 * 24;

describeRedis('usage history of a big application on Redis', () => {
  const { client, prefix } = redisForBlock('big_history');
  afterEach(closeHosts);

  it('answers a month of 600 endpoints by the hour while guarded calls go on, with no outage', async () => {
    const logger = capturingLogger();
    const quota = createRedisQuotaStore({ client, prefix: `${prefix}:quota` });
    const now = Date.now();
    const host = await startHost('express', {
      logger,
      clock: testClock(now),
      quota: { store: quota, storeTimeoutMs: DEADLINE_MS },
      oauth: { store: createRedisOAuthStore({ client, prefix: `${prefix}:oauth:` }), storeTimeoutMs: DEADLINE_MS },
      platform: { admin: { token: TOKEN } },
    });
    const first = now - (now % HOUR) - (HOURS - 1) * HOUR;
    let calls = 0;
    for (let h = 0; h < HOURS; h += 24) {
      const day: HourCount[] = [];
      for (let hour = h; hour < h + 24; hour++) {
        for (let e = 0; e < ENDPOINTS; e++) {
          const [admitted, rejected] = [1 + ((e + hour) % 5), (e + hour) % 7 === 0 ? 1 : 0];
          day.push({ clientId: CONFIDENTIAL.id, apiPath: `/openapi/v1/e${e}`, hour: first + hour * HOUR, admitted, rejected });
          calls += admitted + rejected;
        }
      }
      await quota.history!.add(day, now, { hourlyDays: 35, dailyDays: 400 });
    }
    // Another application pings: its calls, flushed during a slow read, are not in this history.
    const { token } = await accessToken(host, OTHER);

    const started = performance.now();
    let reading = true;
    const read = host
      .http()
      .get(`/admin/usage/history?client_id=${CONFIDENTIAL.id}&from=${new Date(first).toISOString()}`)
      .set(OPERATOR)
      .then((res) => ((reading = false), res));
    const pings: number[] = [];
    while (reading && pings.length < 40) {
      pings.push((await ping(host, token)).status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const res = await read;
    // Longer than a call may stay silent: read as one call, this read fails with a 503.
    expect(performance.now() - started).toBeGreaterThan(2 * DEADLINE_MS);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const { series, other } = res.body.data as { series: { points: { admitted: number; rejected: number }[] }[]; other: { endpoints: number; points: { admitted: number; rejected: number }[] } };
    expect([series.length, other.endpoints, series[0]!.points.length]).toEqual([100, ENDPOINTS - 100, HOURS]);
    expect([...series, other].flatMap((s) => s.points).reduce((sum, p) => sum + p.admitted + p.rejected, 0)).toBe(calls);

    expect(pings.filter((status) => status !== 200)).toEqual([]);
    expect(logger.records.map((r) => r.message).filter((message) => /store/.test(message))).toEqual([]);
  }, 60_000);
});
