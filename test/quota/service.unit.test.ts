/**
 * The quota service on its own (memory store, injected clock): options, decisions, the
 * ratelimit headers (IETF httpapi ratelimit-headers, draft-10 syntax), the 429 body and the
 * get_quota report (docs/quota.md). What it does when the store or the rule source fails is in
 * service.store-errors.unit.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import {
  QuotaStoreError,
  createMemoryQuotaStore,
  createQuotaService,
  guardVerdict,
  quotaExceededResponse,
  quotaHeaders,
  quotaReportResponse,
  rateLimitHeader,
  rateLimitPolicyHeader,
  type QuotaDecision,
  type QuotaServiceOptions,
  type QuotaStore,
  type RuleSource,
} from '../../src/quota/index.js';
import { at, flakyStore, recordingLogger, service } from './service-harness.js';

describe('options', () => {
  it('needs none: memory store, UTC, the documented defaults, onStoreError open', async () => {
    const quota = createQuotaService({ logger: recordingLogger() });
    expect(quota.store.kind).toBe('memory');
    expect(quota.calendar.timeZone).toBe('UTC');
    expect(quota.onStoreError).toBe('open');
    const d = await quota.consume('app', '/openapi/v1/ping');
    expect(d.outcome === 'admitted' && d.rule).toEqual({ scope: 'system', apiPath: '/openapi/v1/ping', cost: 1, limits: { minute: 60, day: 1000, month: 0 } });
  });

  it.each<[string, unknown, RegExp]>([
    ['an unknown option', { storeTimeout: 5 }, /quota\.storeTimeout: is not an option/],
    ['an unknown zone', { timeZone: 'Mars/Base' }, /quota\.timeZone/],
    ['a bad onStoreError', { onStoreError: 'ignore' }, /quota\.onStoreError/],
    ['a non-store', { store: { consume() {} } }, /quota\.store/],
    ['a bad default', { defaults: { minute: -1 } }, /quota\.defaults\.minute/],
    ['a cost that is not a number', { defaults: { cost: Number.NaN } }, /quota\.defaults\.cost/],
    ['an unknown default', { defaults: { hour: 5 } }, /quota\.defaults\.hour: is not an option/],
    ['an invalid rule', { rules: [{ scope: 'client', apiPath: '/x' }] }, /rules\[0\].*clientId/],
    ['a rule that can never pass', { rules: [{ scope: 'global', apiPath: '/x', cost: 5, minute: 3 }] }, /cost 5 exceeds the minute limit 3/],
    ['defaults that can never pass', { defaults: { cost: 100 } }, /cost 100 exceeds the minute limit 60/],
    ['a zero timeout', { storeTimeoutMs: 0 }, /quota\.storeTimeoutMs/],
  ])('refuses %s with a TypeError at construction', (_, options, message) => {
    expect(() => createQuotaService(options as QuotaServiceOptions)).toThrow(TypeError);
    expect(() => createQuotaService(options as QuotaServiceOptions)).toThrow(message);
  });
});

describe('decisions', () => {
  it('refuses a malformed path with a 400 rather than counting it', async () => {
    const { quota } = service();
    await expect(quota.consume('app', 'openapi/v1/x')).rejects.toThrow(BadRequestError);
    await expect(quota.inspect('app', '')).rejects.toThrow(BadRequestError);
  });

  it('reads rules from an asynchronous source (e.g. a database)', async () => {
    const asked: string[] = [];
    const rules: RuleSource = {
      async findRules(clientId, apiPath) {
        asked.push(`${clientId} ${apiPath}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
        return apiPath === '/openapi/v1/orders' ? { global: { scope: 'global', apiPath, minute: 1 } } : {};
      },
    };
    const { quota } = service({ rules });
    expect((await quota.consume('app', '/openapi/v1/orders/?x=1')).outcome).toBe('admitted');
    const second = await quota.consume('app', '/openapi/v1/orders');
    expect(second.outcome).toBe('rejected');
    expect(asked).toEqual(['app /openapi/v1/orders']); // the second call found the rule cached
    expect(await quota.resolveRule('app', '/openapi/v1/other')).toMatchObject({ scope: 'system' });
  });

  it('counts in whole milliseconds even with a fractional clock', async () => {
    let now = at('2026-11-21T10:00:00Z') + 0.25;
    const quota = createQuotaService({ now: () => (now += 0.5), logger: recordingLogger(), rules: [{ scope: 'global', apiPath: '/x', minute: 2 }] });
    expect((await quota.consume('app', '/x')).outcome).toBe('admitted');
    expect((await quota.consume('app', '/x')).outcome).toBe('admitted');
    expect((await quota.consume('app', '/x')).outcome).toBe('rejected');
  });

  it('refuses an empty client id (a wiring bug) with a TypeError', async () => {
    const { quota } = service();
    await expect(quota.consume('', '/x')).rejects.toThrow(TypeError);
  });

  it('admits a cost-0 endpoint without charging anything', async () => {
    const { quota } = service({ rules: [{ scope: 'global', apiPath: '/free', cost: 0, minute: 1 }] });
    for (let i = 0; i < 3; i++) expect((await quota.consume('app', '/free')).outcome).toBe('admitted');
    const report = await quota.inspect('app', '/free');
    expect(report.outcome === 'ok' && report.report.periods[0]).toMatchObject({ used: 0, remaining: 1 });
  });
});

describe('in-process stores answer within the tick', () => {
  const isThenable = (value: unknown) => typeof (value as { then?: unknown }).then === 'function';

  it('with the memory store and a rule list, consume answers at once; a malformed path still rejects', async () => {
    const { quota } = service({ rules: [{ scope: 'global', apiPath: '/x', minute: 1 }] });
    const first = quota.consume('app', '/x');
    expect(isThenable(first)).toBe(false);
    expect((first as QuotaDecision).outcome).toBe('admitted');
    expect((quota.consume('app', '/x') as QuotaDecision).outcome).toBe('rejected');
    const malformed = quota.consume('app', 'no-slash');
    expect(isThenable(malformed)).toBe(true);
    await expect(malformed).rejects.toThrow(BadRequestError);
  });

  it('a clock that answers nonsense is a rejection, not a synchronous throw', async () => {
    const quota = createQuotaService({ logger: recordingLogger(), now: () => Number.NaN });
    let answer: unknown;
    expect(() => (answer = quota.consume('app', '/x'))).not.toThrow();
    await expect(answer).rejects.toThrow();
  });

  it('a store without consumeSync, or a rule source that answers later, gets a promise', async () => {
    const { quota: networked } = service({ store: flakyStore() });
    const viaStore = networked.consume('app', '/x');
    expect(isThenable(viaStore)).toBe(true);
    expect((await viaStore).outcome).toBe('admitted');
    const { quota: databaseRules } = service({ rules: { findRules: async () => ({}) } });
    const viaRules = databaseRules.consume('app', '/x');
    expect(isThenable(viaRules)).toBe(true);
    expect((await viaRules).outcome).toBe('admitted');
  });

  it('a consumeSync that throws is a store failure: onStoreError applies, and the store is used again next call', async () => {
    const inner = createMemoryQuotaStore();
    let broken = true;
    const store: QuotaStore = {
      kind: 'in-process',
      consume: (request) => inner.consume(request),
      peek: (request) => inner.peek(request),
      consumeSync(request) {
        if (broken) throw new Error('corrupted');
        return inner.consumeSync(request);
      },
    };
    const { quota } = service({ store, onStoreError: 'closed' });
    const failed = await quota.consume('app', '/x');
    expect(failed.outcome === 'store_unavailable' && failed.error).toBeInstanceOf(QuotaStoreError);
    broken = false;
    expect((await quota.consume('app', '/x')).outcome).toBe('admitted');
    expect(await inner.peek({ clientId: 'app', apiPath: '/x', buckets: quota.calendar.windows(at('2026-11-21T10:00:37Z')), now: at('2026-11-21T10:00:37Z') })).toEqual([1, 1, 1]);
  });
});

describe('ratelimit headers (draft-10 syntax)', () => {
  it('announces every limited period on an admitted call', async () => {
    const { quota } = service({ defaults: { month: 50_000 } });
    for (let i = 0; i < 2; i++) await quota.consume('app', '/openapi/v1/orders');
    const d = await quota.consume('app', '/openapi/v1/orders');
    // 10:00:37 UTC: 23 s to the next minute, 13 h 59 min 23 s to midnight, 9 days 13 h 59 min 23 s to 1 December
    expect(quotaHeaders(d)).toEqual({
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400, "month";q=50000',
      ratelimit: `"minute";r=57;t=23, "day";r=997;t=50363, "month";r=49997;t=${9 * 86_400 + 50_363}`,
    });
  });

  it('leaves unlimited periods out, and both headers when nothing is limited', async () => {
    const { quota } = service({ rules: [{ scope: 'global', apiPath: '/day-only', minute: 0 }, { scope: 'global', apiPath: '/free', minute: 0, day: 0 }] });
    expect(quotaHeaders(await quota.consume('app', '/day-only'))).toEqual({ 'ratelimit-policy': '"day";q=1000;w=86400', ratelimit: '"day";r=999;t=50363' });
    expect(quotaHeaders(await quota.consume('app', '/free'))).toEqual({});
  });

  it('rounds t up and never renders a negative remaining', () => {
    const periods = [{ period: 'minute' as const, limit: 5, used: 7, remaining: 0, unlimited: false, resetAt: 10_001 }];
    expect(rateLimitPolicyHeader(periods)).toBe('"minute";q=5;w=60');
    expect(rateLimitHeader(periods, 9_000)).toBe('"minute";r=0;t=2');
    expect(rateLimitHeader([], 0)).toBeUndefined();
  });
});

describe('429', () => {
  it('answers Retry-After, the headers and { code: 1, message, data: { api_path, period, reset_at } }', async () => {
    const { quota } = service({ rules: [{ scope: 'global', apiPath: '/openapi/v1/orders', minute: 1, day: 1 }] });
    await quota.consume('app', '/openapi/v1/orders');
    const d = await quota.consume('app', '/openapi/v1/orders/');
    if (d.outcome !== 'rejected') throw new Error(d.outcome);
    expect(d.exhausted).toEqual(['minute', 'day']);
    const response = quotaExceededResponse(d);
    expect(response.status).toBe(429);
    expect(response.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'retry-after': '50363', // the latest reset among the exhausted periods: midnight, not the next minute
      'ratelimit-policy': '"minute";q=1;w=60, "day";q=1;w=86400',
      ratelimit: '"minute";r=0;t=23, "day";r=0;t=50363',
    });
    expect(JSON.parse(response.body)).toEqual({
      code: 1,
      message: 'Quota exceeded for /openapi/v1/orders: the day limit of 1 is used up; retry after 2026-11-22T00:00:00.000Z',
      data: { api_path: '/openapi/v1/orders', period: 'day', reset_at: '2026-11-22T00:00:00.000Z' },
    });
    expect(guardVerdict(d)).toEqual({ pass: false, response });
  });

  it('lets an admitted call pass with its headers', async () => {
    const { quota } = service();
    const verdict = guardVerdict(await quota.consume('app', '/x'));
    expect(verdict).toEqual({ pass: true, headers: { 'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400', ratelimit: '"minute";r=59;t=23, "day";r=999;t=50363' } });
  });
});

describe('get_quota rendering', () => {
  it('answers the envelope with data and time', async () => {
    const { quota } = service();
    await quota.consume('app', '/openapi/v1/orders');
    const response = quotaReportResponse(await quota.inspect('app', '/openapi/v1/orders'));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      code: 0,
      message: 'ok',
      time: '2026-11-21T10:00:37.000Z',
      data: {
        api_path: '/openapi/v1/orders',
        scope: 'system',
        cost: 1,
        periods: [
          { period: 'minute', limit: 60, used: 1, remaining: 59, unlimited: false, reset_at: '2026-11-21T10:01:00.000Z' },
          { period: 'day', limit: 1000, used: 1, remaining: 999, unlimited: false, reset_at: '2026-11-22T00:00:00.000Z' },
          { period: 'month', limit: 0, used: 1, remaining: -1, unlimited: true, reset_at: '2026-12-01T00:00:00.000Z' },
        ],
      },
    });
  });
});
