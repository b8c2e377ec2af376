/**
 * Quota store conformance. Admission: limits, costs, unlimited periods, nothing charged for a
 * rejection, the latest reset, which rule applies, one endpoint however its path is spelt, and no
 * over-admission under concurrent calls.
 */
import { expect, it } from 'vitest';
import { at, expectAdmitted, expectRejected, iso, type QuotaConformanceSuite } from './harness.js';

export function registerAdmissionTests(suite: QuotaConformanceSuite): void {
  const { client, harness } = suite;

  it('admits up to the limit, then rejects with the period, its reset and Retry-After', async () => {
    const id = client('limit');
    const path = '/openapi/v1/orders';
    const h = harness({ start: '2026-11-21T10:00:20.250Z', rules: [{ scope: 'global', apiPath: path, minute: 3 }] });
    for (let i = 1; i <= 3; i++) {
      const d = await h.quota.consume(id, path);
      expectAdmitted(d);
      expect(d.source).toBe('store');
      expect(d.periods.find((p) => p.period === 'minute')).toMatchObject({ limit: 3, used: i, remaining: 3 - i, unlimited: false });
    }
    const rejected = await h.quota.consume(id, path);
    expectRejected(rejected);
    expect(rejected.exhausted).toEqual(['minute']);
    expect(rejected.period).toBe('minute');
    expect(iso(rejected.resetAt)).toBe('2026-11-21T10:01:00.000Z');
    expect(rejected.retryAfterSeconds).toBe(40); // 39.75 s, rounded up
    expect(rejected.periods.find((p) => p.period === 'minute')).toMatchObject({ used: 3, remaining: 0 });
    expect(await h.used(id, path)).toEqual({ minute: 3, day: 3, month: 3 });
  });

  it('charges a cost > 1 from every period and rejects a call whose cost does not fit', async () => {
    const id = client('cost');
    const path = '/openapi/v1/create_order';
    const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: path, cost: 3, minute: 10, day: 100 }] });
    for (let i = 1; i <= 3; i++) expectAdmitted(await h.quota.consume(id, path));
    const rejected = await h.quota.consume(id, path); // 9 + 3 > 10
    expectRejected(rejected);
    expect(rejected.rule.cost).toBe(3);
    expect(rejected.periods.find((p) => p.period === 'minute')).toMatchObject({ used: 9, remaining: 1 });
    const inspection = await h.quota.inspect(id, path);
    expect(inspection.outcome).toBe('ok');
    if (inspection.outcome !== 'ok') return;
    expect(inspection.report).toMatchObject({ api_path: path, scope: 'global', cost: 3 });
    expect(inspection.report.periods).toEqual([
      { period: 'minute', limit: 10, used: 9, remaining: 1, unlimited: false, reset_at: '2026-11-21T10:01:00.000Z' },
      { period: 'day', limit: 100, used: 9, remaining: 91, unlimited: false, reset_at: '2026-11-22T00:00:00.000Z' },
      { period: 'month', limit: 0, used: 9, remaining: -1, unlimited: true, reset_at: '2026-12-01T00:00:00.000Z' },
    ]);
  });

  it('keeps counting in unlimited periods (limit 0)', async () => {
    const id = client('unlimited');
    const path = '/openapi/v1/free';
    const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: path, minute: 0, day: 0, month: 0 }] });
    for (let i = 0; i < 75; i++) expectAdmitted(await h.quota.consume(id, path)); // more than the default 60/minute
    const inspection = await h.quota.inspect(id, path);
    if (inspection.outcome !== 'ok') throw inspection.error;
    for (const p of inspection.report.periods) expect(p).toMatchObject({ limit: 0, used: 75, remaining: -1, unlimited: true });
  });

  it('counts the largest cost under the largest limit exactly, and refuses larger ones before counting (MAX_COST, MAX_LIMIT)', async () => {
    const id = client('bounds');
    const path = '/openapi/v1/heavy';
    const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: path, cost: 1000, minute: 0, day: 1e12, month: 1e12 }] });
    for (let i = 0; i < 3; i++) expectAdmitted(await h.quota.consume(id, path));
    expect(await h.used(id, path)).toEqual({ minute: 3000, day: 3000, month: 3000 });

    const buckets = [{ period: 'month' as const, start: at('2026-11-01T00:00:00Z'), end: at('2026-12-01T00:00:00Z'), limit: 1e12 }];
    const now = at('2026-11-21T10:00:00Z');
    await expect(suite.store.consume({ clientId: id, apiPath: path, cost: 1001, buckets, now })).rejects.toMatchObject({ code: 'invalid_argument', field: 'cost' });
    await expect(suite.store.consume({ clientId: id, apiPath: path, cost: 1, buckets: [{ ...buckets[0]!, limit: 1e12 + 1 }], now })).rejects.toMatchObject({ code: 'invalid_argument', field: 'buckets[0].limit' });
    expect(await h.used(id, path)).toEqual({ minute: 3000, day: 3000, month: 3000 });
  });

  it('charges nothing for a rejected call, in any period', async () => {
    const id = client('nothing');
    const path = '/openapi/v1/orders';
    const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: path, minute: 5, day: 3, month: 10 }] });
    for (let i = 0; i < 3; i++) expectAdmitted(await h.quota.consume(id, path));
    for (let i = 0; i < 4; i++) {
      const rejected = await h.quota.consume(id, path);
      expectRejected(rejected);
      expect(rejected.exhausted).toEqual(['day']);
      expect(iso(rejected.resetAt)).toBe('2026-11-22T00:00:00.000Z');
    }
    // the minute had room and the month too: neither was charged by the rejected calls
    expect(await h.used(id, path)).toEqual({ minute: 3, day: 3, month: 3 });
  });

  it('names the latest reset among the exhausted periods', async () => {
    const id = client('latest');
    const path = '/openapi/v1/orders';
    const h = harness({ start: '2026-11-21T23:00:00Z', rules: [{ scope: 'global', apiPath: path, minute: 2, day: 2 }] });
    for (let i = 0; i < 2; i++) expectAdmitted(await h.quota.consume(id, path));
    const rejected = await h.quota.consume(id, path);
    expectRejected(rejected);
    expect(rejected.exhausted).toEqual(['minute', 'day']);
    expect(rejected.period).toBe('day');
    expect(iso(rejected.resetAt)).toBe('2026-11-22T00:00:00.000Z');
    expect(rejected.retryAfterSeconds).toBe(3600);
  });

  it('applies the client rule, else the global rule, else the system defaults', async () => {
    const partner = client('partner');
    const other = client('other');
    const path = '/openapi/v1/orders';
    const h = harness({
      start: '2026-11-21T10:00:00Z',
      rules: [
        { scope: 'global', apiPath: path, minute: 5, day: 50, cost: 2 },
        { scope: 'client', clientId: partner, apiPath: path, minute: 7 },
      ],
    });
    const a = await h.quota.consume(partner, path);
    expectAdmitted(a);
    expect(a.rule).toEqual({ scope: 'client', apiPath: path, cost: 1, limits: { minute: 7, day: 1000, month: 0 } });
    const b = await h.quota.consume(other, path);
    expectAdmitted(b);
    expect(b.rule).toEqual({ scope: 'global', apiPath: path, cost: 2, limits: { minute: 5, day: 50, month: 0 } });
    const c = await h.quota.consume(partner, '/openapi/v1/unruled');
    expectAdmitted(c);
    expect(c.rule).toEqual({ scope: 'system', apiPath: '/openapi/v1/unruled', cost: 1, limits: { minute: 60, day: 1000, month: 0 } });
    // counters are per client: the partner's call did not touch the other client's count
    expect(await h.used(partner, path)).toEqual({ minute: 1, day: 1, month: 1 });
    expect(await h.used(other, path)).toEqual({ minute: 2, day: 2, month: 2 });
    const report = await h.quota.inspect(other, path);
    expect(report.outcome === 'ok' && report.report.scope).toBe('global');
  });

  it('treats /x/, /x?q=1 and /x as one endpoint', async () => {
    const id = client('paths');
    const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: '/openapi/v1/ping/', minute: 2 }] });
    expectAdmitted(await h.quota.consume(id, '/openapi/v1/ping/'));
    expectAdmitted(await h.quota.consume(id, '/openapi/v1/ping?x=1'));
    expectRejected(await h.quota.consume(id, '/openapi/v1/ping'));
    expect(await h.used(id, '/openapi/v1/ping//?y=2#f')).toEqual({ minute: 2, day: 2, month: 2 });
  });


  it('never admits more than the limit under concurrent calls from one process', async () => {
    const id = client('burst');
    const path = '/openapi/v1/orders';
    const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: path, minute: 20, day: 1000 }] });
    const decisions = await Promise.all(Array.from({ length: 60 }, () => h.quota.consume(id, path)));
    expect(decisions.filter((d) => d.outcome === 'admitted')).toHaveLength(20);
    expect(decisions.filter((d) => d.outcome === 'rejected')).toHaveLength(40);
    expect(await h.used(id, path)).toEqual({ minute: 20, day: 20, month: 20 });
  });
}
