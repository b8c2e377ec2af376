/**
 * A host's rule source (`quota.rules` as an object with findRules) through the public HTTP
 * surface on Express, Koa and Connect: its answers are cached per client and path for
 * `quota.ruleCache.ttlMs`, and a source that fails follows `quota.onStoreError` like the store
 * (docs/quota.md): 'open' admits under the insurance limit with the last rule it answered,
 * 'closed' answers 503, never a 500, with one warning per outage.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { QuotaOptions } from '../../src/options.js';
import type { MatchedRules, RuleSource } from '../../src/quota/index.js';
import { capturingLogger } from '../support/logger.js';
import { ADAPTER_NAMES, CONFIDENTIAL, accessToken, closeHosts, ping, startHost, type AdapterName } from './quota-helpers.js';

/** A rule source that counts its calls and can be made to fail. */
function switchableSource(): RuleSource & { calls: number; failing: boolean } {
  const source = {
    calls: 0,
    failing: false,
    async findRules(_clientId: string, apiPath: string): Promise<MatchedRules> {
      source.calls++;
      if (source.failing) throw new Error('rules table unreachable');
      return { global: { scope: 'global', apiPath, minute: 3 } };
    },
  };
  return source;
}

describe.each(ADAPTER_NAMES)('a quota rule source over HTTP on %s', (adapter: AdapterName) => {
  afterEach(closeHosts);

  it('is asked once per client and path within ruleCache.ttlMs, and again after it', async () => {
    const rules = switchableSource();
    const host = await startHost(adapter, { quota: { rules, ruleCache: { ttlMs: 5000 } } });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).headers['ratelimit-policy']).toBe('"minute";q=3;w=60, "day";q=1000;w=86400');
    expect((await ping(host, token)).status).toBe(200);
    expect(rules.calls).toBe(1);
    host.clock.advance(5000);
    expect((await ping(host, token)).status).toBe(200);
    expect(rules.calls).toBe(2);
    expect((await ping(host, token)).status).toBe(429); // the fourth call of the minute, limit 3
    expect(rules.calls).toBe(2);
  });

  it("fails 'open': admitted under the last rule it answered, then 429, never a 500; one warning", async () => {
    const rules = switchableSource();
    const logger = capturingLogger();
    const quota: QuotaOptions = { rules, onStoreError: 'open', ruleCache: { ttlMs: 1000 } };
    const host = await startHost(adapter, { quota, logger });
    const { token } = await accessToken(host, CONFIDENTIAL);
    expect((await ping(host, token)).status).toBe(200);
    rules.failing = true;
    host.clock.advance(1000);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await ping(host, token)).status);
    expect(statuses).toEqual([200, 200, 429]); // the minute limit of 3 the source answered, 1 already used
    expect(logger.records.filter((r) => r.level === 'warn' && /quota store unavailable/.test(r.message))).toHaveLength(1);
  });

  it("fails 'closed': 503 code 1, never a 500; one warning", async () => {
    const rules = switchableSource();
    rules.failing = true;
    const logger = capturingLogger();
    const host = await startHost(adapter, { quota: { rules, onStoreError: 'closed' }, logger });
    const { token } = await accessToken(host, CONFIDENTIAL);
    for (let i = 0; i < 2; i++) {
      const res = await ping(host, token);
      expect(res.status, res.text).toBe(503);
      expect(res.body).toMatchObject({ code: 1 });
    }
    expect(host.handled).toEqual([]);
    expect(logger.records.filter((r) => r.level === 'warn' && /quota store unavailable/.test(r.message))).toHaveLength(1);
  });
});
