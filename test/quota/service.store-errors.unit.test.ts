/**
 * The quota service when its store or rule source fails (memory store made to fail, injected
 * clock): `onStoreError` 'open' with its local insurance limit, 'closed', and a rule source
 * answering a bad rule, a counter the store answers a data error about (docs/quota.md).
 */
import { describe, expect, it } from 'vitest';
import {
  createMemoryQuotaStore,
  QuotaStoreError,
  QuotaStoreTimeoutError,
  guardVerdict,
  quotaHeaders,
  quotaReportResponse,
  type QuotaDecision,
  type QuotaStore,
  type RuleSource,
} from '../../src/quota/index.js';
import { at, type Failure, flakyStore, service } from './service-harness.js';

/** `times` calls of one client and path in a row, each as [outcome, who decided it]. */
async function decided(quota: { consume(clientId: string, apiPath: string): QuotaDecision | Promise<QuotaDecision> }, clientId: string, apiPath: string, times: number) {
  const decisions: [string, string | false][] = [];
  for (let i = 0; i < times; i++) {
    const d = await quota.consume(clientId, apiPath);
    decisions.push([d.outcome, d.outcome !== 'store_unavailable' && d.source]);
  }
  return decisions;
}

/**
 * A refused source answer is kept for the rule cache's 5 s, then the source is asked again;
 * its log line comes again only after an hour.
 */
async function askedAgainLoggedHourly(run: ReturnType<typeof service>, clientId: string, apiPath: string, asked: () => number, level: string) {
  const before = asked();
  run.advance(5000);
  await run.quota.consume(clientId, apiPath);
  expect(asked()).toBe(before + 1);
  expect(run.logger.records).toHaveLength(1);
  run.advance(3_600_000);
  await run.quota.consume(clientId, apiPath);
  expect(run.logger.records.map((r) => r.level)).toEqual([level, level]);
}

describe("onStoreError: 'open'", () => {
  it.each<Failure>(['reject', 'throw', 'hang'])('admits under the local insurance limit when the store fails (%s)', async (failure) => {
    const store = flakyStore();
    const { quota } = service({ store, storeTimeoutMs: 50, rules: [{ scope: 'global', apiPath: '/openapi/v1/orders', minute: 3 }] });
    store.failure = failure;
    const decisions: QuotaDecision[] = [];
    for (let i = 0; i < 4; i++) decisions.push(await quota.consume(`app-${failure}`, '/openapi/v1/orders'));
    // A call that hung may have been counted by the store: the insurance limiter counts it too.
    const admittedBeforeTheLimit = failure === 'hang' ? 1 : 3;
    expect(decisions.map((d) => [d.outcome, 'source' in d ? d.source : undefined])).toEqual(
      [0, 1, 2, 3].map((i) => [i < admittedBeforeTheLimit ? 'admitted' : 'rejected', 'insurance']),
    );
    const last = decisions[3];
    if (last?.outcome !== 'rejected') throw new Error('expected a rejection');
    expect(last.exhausted).toEqual(['minute']);
    expect(last.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(last.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(quotaHeaders(decisions[0]!)).toMatchObject({ 'ratelimit-policy': '"minute";q=3;w=60, "day";q=1000;w=86400' });
    expect(quota.degraded).toBe(true);
  });

  it('continues from the minute the store last reported: a used-up minute stays used up until it rolls over', async () => {
    const store = flakyStore();
    const { quota, advance } = service({ store, start: '2026-11-21T10:00:37Z', rules: [{ scope: 'global', apiPath: '/openapi/v1/orders', minute: 3 }] });
    for (let i = 0; i < 3; i++) expect((await quota.consume('app', '/openapi/v1/orders')).outcome).toBe('admitted');
    store.failure = 'reject';
    const during: QuotaDecision[] = [];
    for (let i = 0; i < 5; i++) during.push(await quota.consume('app', '/openapi/v1/orders'));
    expect(during.map((d) => d.outcome === 'rejected' && d.source === 'insurance' && d.period)).toEqual(['minute', 'minute', 'minute', 'minute', 'minute']);
    expect(guardVerdict(during[0]!)).toMatchObject({ pass: false, response: { status: 429 } });
    expect(during[0]?.outcome === 'rejected' && during[0].resetAt).toBe(at('2026-11-21T10:01:00Z'));
    advance(22_999); // 10:00:59.999
    expect((await quota.consume('app', '/openapi/v1/orders')).outcome).toBe('rejected');
    advance(1); // the next calendar minute
    expect(await decided(quota, 'app', '/openapi/v1/orders', 4)).toEqual([
      ['admitted', 'insurance'],
      ['admitted', 'insurance'],
      ['admitted', 'insurance'],
      ['rejected', 'insurance'],
    ]);
    // Other clients and paths keep their own counts.
    expect((await quota.consume('other-app', '/openapi/v1/orders')).outcome).toBe('admitted');
  });

  it('admits exactly what is left of the minute the store reported (50 of 60 leaves 10)', async () => {
    const store = flakyStore();
    const { quota } = service({ store, rules: [{ scope: 'global', apiPath: '/x', minute: 60, day: 0 }] });
    for (let i = 0; i < 50; i++) await quota.consume('app', '/x');
    store.failure = 'reject';
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) outcomes.push((await quota.consume('app', '/x')).outcome);
    expect(outcomes).toEqual([...Array<string>(10).fill('admitted'), 'rejected', 'rejected']);
    const last = await quota.consume('app', '/x');
    expect(last.outcome === 'rejected' && last.periods).toEqual([
      { period: 'minute', limit: 60, used: 60, remaining: 0, unlimited: false, resetAt: at('2026-11-21T10:01:00Z') },
    ]);
  });

  it('continues from the day the store reported too, where the day is limited', async () => {
    const store = flakyStore();
    const { quota, advance } = service({ store, start: '2026-11-21T23:58:10Z', rules: [{ scope: 'global', apiPath: '/x', minute: 10, day: 4 }] });
    for (let i = 0; i < 4; i++) expect((await quota.consume('app', '/x')).outcome).toBe('admitted');
    advance(60_000); // a fresh minute, the same day
    store.failure = 'throw';
    const d = await quota.consume('app', '/x');
    expect(d.outcome === 'rejected' && [d.source, d.exhausted, d.period, d.resetAt]).toEqual(['insurance', ['day'], 'day', at('2026-11-22T00:00:00Z')]);
    advance(60_000); // the next day
    expect((await quota.consume('app', '/x')).outcome).toBe('admitted');
  });

  it('logs one warning per outage and one info when the store is back, which the next call finds by itself', async () => {
    const store = flakyStore();
    const { quota, logger, advance } = service({ store });
    expect((await quota.consume('app', '/x')).outcome).toBe('admitted');
    store.failure = 'reject';
    for (let i = 0; i < 5; i++) {
      const d = await quota.consume('app', '/x');
      expect(d.outcome === 'admitted' && d.source).toBe('insurance');
      expect((await quota.inspect('app', '/x')).outcome).toBe('store_unavailable');
    }
    expect(logger.records.map((r) => r.level)).toEqual(['warn']);
    expect(logger.records[0]?.message).toMatch(/quota store unavailable.*onStoreError: open/);
    expect(logger.records[0]?.fields).toMatchObject({ store: 'flaky', err: expect.objectContaining({ message: expect.stringMatching(/ECONNREFUSED/) }) });
    store.failure = false;
    advance(5000);
    const back = await quota.consume('app', '/x');
    expect(back.outcome === 'admitted' && back.source).toBe('store');
    expect(back.outcome === 'admitted' && back.periods[0]?.used).toBe(2); // insurance calls are not in the store
    expect(logger.records.map((r) => r.level)).toEqual(['warn', 'info']);
    expect(logger.records[1]?.fields).toMatchObject({ unavailableForMs: 5000 });
    expect(quota.degraded).toBe(false);
    // Within a minute of the warning a new outage is a relapse and logs nothing
    // (docs/stores.md#deadlines-and-outages); a minute after it, the next one warns again.
    store.failure = 'throw';
    await quota.consume('app', '/x');
    expect(quota.degraded).toBe(true);
    expect(logger.records.map((r) => r.level)).toEqual(['warn', 'info']);
    store.failure = false;
    await quota.consume('app', '/x');
    advance(55_000);
    store.failure = 'throw';
    await quota.consume('app', '/x');
    expect(logger.records.map((r) => r.level)).toEqual(['warn', 'info', 'warn']);
    expect(logger.records[2]?.fields).toMatchObject({ relapses: 1 });
  });

  it('gives up on a hanging store at the deadline', async () => {
    const store = flakyStore();
    const { quota } = service({ store, storeTimeoutMs: 30 });
    store.failure = 'hang';
    const started = performance.now();
    const d = await quota.consume('app', '/x');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(d.outcome === 'admitted' && d.source).toBe('insurance');
  });

  it('admits everything when insurance is off, and uses the defaults when the rule source fails', async () => {
    const store = flakyStore();
    const off = service({ store, insurance: false, rules: [{ scope: 'global', apiPath: '/x', minute: 1 }] });
    store.failure = 'reject';
    for (let i = 0; i < 5; i++) expect((await off.quota.consume('app', '/x')).outcome).toBe('admitted');

    const rules: RuleSource = { findRules: () => Promise.reject(new Error('rules table gone')) };
    const { quota, logger } = service({ rules, defaults: { minute: 2 } });
    const decisions = [await quota.consume('app', '/x'), await quota.consume('app', '/x'), await quota.consume('app', '/x')];
    expect(decisions.map((d) => d.outcome)).toEqual(['admitted', 'admitted', 'rejected']);
    expect(decisions[0]?.outcome === 'admitted' && decisions[0].rule.scope).toBe('system');
    expect(logger.records).toHaveLength(1);
    expect((logger.records[0]?.fields?.err as Error | undefined)?.message).toMatch(/rule source failed: rules table gone/);
  });
});

describe('a custom rule source returning a bad rule', () => {
  it('is treated as a failing rule source, never charged with nonsense limits', async () => {
    const rules: RuleSource = { findRules: async (_clientId, apiPath) => ({ global: { scope: 'global', apiPath, minute: -3 } }) };
    const { quota, logger } = service({ rules, onStoreError: 'closed' });
    const d = await quota.consume('app', '/x');
    expect(d.outcome).toBe('store_unavailable');
    expect(d.outcome === 'store_unavailable' && d.error.message).toMatch(/rule source failed: .*minute: must be at least 0/);
    expect(logger.records).toHaveLength(1);
  });

  it('is no outage, since the source answered: one error naming the rule an hour, the answer kept like a good one', async () => {
    let asked = 0;
    const rules: RuleSource = {
      findRules: async (clientId, apiPath) => {
        asked++;
        return apiPath === '/bad' ? { global: { scope: 'global', apiPath, minute: 10, cost: 5000 } } : { client: { scope: 'client', clientId, apiPath, minute: 2 } };
      },
    };
    const run = service({ rules, ruleCache: { ttlMs: 5000 } });
    const { quota, logger } = run;
    const bad = [];
    for (let i = 0; i < 3; i++) bad.push(await quota.consume(`app-${i % 2}`, '/bad'));
    // 'open': the insurance limiter decides under the defaults, as for a failing source.
    expect(bad.map((d) => [d.outcome, d.outcome !== 'store_unavailable' && d.source])).toEqual(Array.from({ length: 3 }, () => ['admitted', 'insurance']));
    expect(quota.degraded).toBe(false);
    expect(asked).toBe(2);
    // Another path of the source is decided by the store meanwhile, under its rule.
    expect(await decided(quota, 'app-0', '/good', 3)).toEqual([['admitted', 'store'], ['admitted', 'store'], ['rejected', 'store']]);
    expect(logger.records.map((r) => [r.level, r.message])).toEqual([['error', expect.stringMatching(/invalid rule, .*global rule for \/bad.*cost: must be at most 1000/)]]);

    await askedAgainLoggedHourly(run, 'app-0', '/bad', () => asked, 'error');
  });
});

describe('a custom rule source answering what is not an answer', () => {
  it.each<[string, unknown]>([
    ['an array of rules', [{ scope: 'global', apiPath: '/x', minute: 2 }]],
    ['a string', 'minute=2'],
    ['a misspelt key', { Global: { scope: 'global', apiPath: '/x', minute: 2 } }],
    ['a Map', new Map([['global', { scope: 'global', apiPath: '/x', minute: 2 }]])],
    ['a client rule of null', { client: null }],
    ['a global rule naming another path', { global: { scope: 'global', apiPath: '/y', minute: 2 } }],
  ])('refuses %s like a bad rule, not the defaults in silence', async (_name, answer) => {
    const rules = { findRules: () => answer } as unknown as RuleSource;
    const { quota, logger } = service({ rules, onStoreError: 'closed' });
    const d = await quota.consume('app', '/x');
    expect(d.outcome).toBe('store_unavailable');
    expect(logger.records.map((r) => [r.level, r.message])).toEqual([['error', expect.stringMatching(/^quota: invalid rule, rule source/)]]);
    expect(quota.degraded).toBe(false);
  });

  it.each([undefined, null])('takes %s for no rule: the defaults', async (answer) => {
    const rules = { findRules: () => answer } as unknown as RuleSource;
    const { quota, logger } = service({ rules, onStoreError: 'closed' });
    const d = await quota.consume('app', '/x');
    expect(d.outcome === 'admitted' && d.rule.scope).toBe('system');
    expect(logger.records).toEqual([]);
  });

  it('logs at most 20 invalid rules an hour, however many paths its callers make up', async () => {
    // One family rule answered for every path under /orders/: refused for each (it names another path).
    const rules: RuleSource = { findRules: () => ({ global: { scope: 'global', apiPath: '/orders', minute: 5 } }) };
    const { quota, logger, advance } = service({ rules });
    for (let i = 0; i < 100; i++) await quota.consume('app', `/orders/${i}`);
    expect(logger.records.map((r) => r.level)).toEqual([...Array.from({ length: 20 }, () => 'error'), 'warn']);
    expect(logger.records.at(-1)?.message).toMatch(/more than 20 invalid rules within the hour/);
    advance(3_600_000);
    await quota.consume('app', '/orders/new');
    expect(logger.records).toHaveLength(22);
  });
});

describe('a counter the store answers a data error about', () => {
  /** A memory store whose counters of `damaged` ("client path") are answered as a Redis key holding a hash is. */
  const damagedStore = (damaged: Set<string>): QuotaStore => {
    const inner = createMemoryQuotaStore();
    const wrongType = () => Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { name: 'ReplyError' });
    return {
      kind: 'damaged',
      consume: (request) => (damaged.has(`${request.clientId} ${request.apiPath}`) ? Promise.reject(wrongType()) : inner.consume(request)),
      peek: (request) => inner.peek(request),
      usage: inner.usage,
    };
  };

  it.each(['open', 'closed'] as const)('is no outage (%s): its client and path are answered as when the store fails, one warning an hour names them and the reset', async (onStoreError) => {
    const damaged = new Set(['app /x']);
    const { quota, logger, advance } = service({ store: damagedStore(damaged), onStoreError, rules: [{ scope: 'global', apiPath: '/x', minute: 3 }] });
    expect(await decided(quota, 'app', '/x', 4)).toEqual(
      onStoreError === 'open' ? [...Array.from({ length: 3 }, () => ['admitted', 'insurance']), ['rejected', 'insurance']] : Array.from({ length: 4 }, () => ['store_unavailable', false]),
    );
    expect(quota.degraded).toBe(false);
    // Other clients of the path are counted by the store meanwhile.
    expect([await quota.consume('other', '/x'), await quota.consume('other', '/x')].map((d) => d.outcome !== 'store_unavailable' && d.source)).toEqual(['store', 'store']);
    const warning = (r: { level: string; message: string }) => [r.level, r.message];
    expect(logger.records.map(warning)).toEqual([['warn', expect.stringContaining('a counter of "app" on /x is damaged')]]);
    // A quota service of its own has no admin API: the store's reset is the repair.
    expect(logger.records[0]?.message).toContain('until the quota store\'s usage.reset("app", "/x") resets its counters');
    expect(logger.records[0]?.fields).toMatchObject({ clientId: 'app', apiPath: '/x' });

    advance(3_599_999);
    await quota.consume('app', '/x');
    expect(logger.records).toHaveLength(1);
    advance(1);
    await quota.consume('app', '/x');
    expect(logger.records.map((r) => r.level)).toEqual(['warn', 'warn']);

    // Repaired (the reset deletes the damaged counters): counted by the store again.
    damaged.clear();
    const repaired = await quota.consume('app', '/x');
    expect(repaired.outcome !== 'store_unavailable' && repaired.source).toBe('store');
    expect(logger.records).toHaveLength(2);
  });
});

describe('a rule source that answers a data error', () => {
  const wrongType = () => Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { name: 'ReplyError' });

  it.each([
    ['open', 'async'],
    ['open', 'sync'],
    ['closed', 'async'],
    ['closed', 'sync'],
  ] as const)('is no outage (%s, %s): its calls are answered as when the source fails, the refusal is kept, one warning an hour', async (onStoreError, answers) => {
    let asked = 0;
    const rules: RuleSource = {
      findRules: (_clientId, apiPath) => {
        asked++;
        if (apiPath === '/x') {
          if (answers === 'sync') throw wrongType();
          return Promise.reject(wrongType());
        }
        const found = { global: { scope: 'global' as const, apiPath, minute: 2 } };
        return answers === 'sync' ? found : Promise.resolve(found);
      },
    };
    const run = service({ rules, onStoreError, ruleCache: { ttlMs: 5000 } });
    const { quota, logger } = run;
    expect(await decided(quota, 'app', '/x', 3)).toEqual(
      Array.from({ length: 3 }, () => (onStoreError === 'open' ? ['admitted', 'insurance'] : ['store_unavailable', false])),
    );
    expect(quota.degraded).toBe(false);
    expect(asked).toBe(1);
    // Another path of the source is decided by the store meanwhile, under its rule.
    expect(await decided(quota, 'app', '/y', 3)).toEqual([['admitted', 'store'], ['admitted', 'store'], ['rejected', 'store']]);
    expect(logger.records.map((r) => [r.level, r.message])).toEqual([['warn', expect.stringMatching(/^quota: the rule source cannot be read: .*WRONGTYPE.*no outage/)]]);

    await askedAgainLoggedHourly(run, 'app', '/x', () => asked, 'warn');
    expect(quota.degraded).toBe(false);
  });
});

describe("onStoreError: 'closed'", () => {
  it('answers store_unavailable (503, code 1) and recovers with the store', async () => {
    const store = flakyStore();
    const { quota, logger } = service({ store, onStoreError: 'closed', storeTimeoutMs: 30 });
    for (const failure of ['reject', 'throw', 'hang'] as const) {
      store.failure = failure;
      const d = await quota.consume('app', '/x');
      if (d.outcome !== 'store_unavailable') throw new Error(d.outcome);
      expect(d.error).toBeInstanceOf(failure === 'hang' ? QuotaStoreTimeoutError : QuotaStoreError);
      expect(d.rule?.scope).toBe('system');
      const verdict = guardVerdict(d);
      if (verdict.pass) throw new Error('passed');
      expect(verdict.response.status).toBe(503);
      expect(JSON.parse(verdict.response.body)).toMatchObject({ code: 1, data: null });
      const inspection = await quota.inspect('app', '/x');
      expect(inspection.outcome).toBe('store_unavailable');
      expect(quotaReportResponse(inspection).status).toBe(503);
    }
    expect(logger.records.filter((r) => r.level === 'warn')).toHaveLength(1);
    expect(logger.records[0]?.message).toMatch(/onStoreError: closed/);
    store.failure = false;
    const back = await quota.consume('app', '/x');
    expect(back.outcome).toBe('admitted');
    expect(store.consumed).toBe(1);
  });

  it('answers store_unavailable without a rule when the rule source fails', async () => {
    const rules: RuleSource = { findRules: () => new Promise(() => {}) };
    const { quota } = service({ rules, onStoreError: 'closed', storeTimeoutMs: 20 });
    const d = await quota.consume('app', '/x');
    expect(d.outcome).toBe('store_unavailable');
    expect(d.outcome === 'store_unavailable' && d.rule).toBeUndefined();
    expect(d.outcome === 'store_unavailable' && d.error.message).toMatch(/rule source did not answer within 20 ms/);
  });
});
