/**
 * The one behaviour every quota store must show (docs/stores.md, docs/quota.md), driven through the quota
 * service with an injected clock, so rules, periods and get_quota are checked on each store too.
 * stores.test.ts runs it against memory, Redis and PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createQuotaService, type QuotaDecision, type QuotaRejected, type QuotaRule, type QuotaService, type QuotaStore } from '../../src/quota/index.js';

export interface ConformanceTarget {
  store: QuotaStore;
  /** Drops what the test created (keys, schema) and closes clients. */
  teardown(): Promise<void>;
}

export interface ConformanceOptions {
  name: string;
  create: () => Promise<ConformanceTarget> | ConformanceTarget;
  /** `describe`, or `describeRedis` / `describePostgres` to skip visibly without a server. */
  suite?: (name: string, body: () => void) => void;
}

const at = (iso: string): number => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`bad instant ${iso}`);
  return t;
};
const iso = (ms: number): string => new Date(ms).toISOString();

function expectAdmitted(decision: QuotaDecision): asserts decision is Extract<QuotaDecision, { outcome: 'admitted' }> {
  expect(decision.outcome, JSON.stringify(decision)).toBe('admitted');
}
function expectRejected(decision: QuotaDecision): asserts decision is QuotaRejected {
  expect(decision.outcome, JSON.stringify(decision)).toBe('rejected');
}

export function describeQuotaStoreConformance({ name, create, suite = describe }: ConformanceOptions): void {
  suite(`quota store conformance: ${name}`, () => {
    // A fresh store per test: each test runs its own clock, and on a shared store the background
    // sweep of one test (at, say, 2028) would delete the counters of the next (back in 2026).
    let target: ConformanceTarget;
    beforeEach(async () => {
      target = await create();
    });
    afterEach(async () => {
      await target?.teardown();
    });

    /** A fresh client id per test too, so no two tests ever read the same counter. */
    const client = (label: string): string => `${label}-${randomBytes(4).toString('hex')}`;

    interface Harness {
      quota: QuotaService;
      set(instant: string | number): void;
      used(clientId: string, path: string): Promise<Record<string, number>>;
    }
    const harness = (options: { rules?: QuotaRule[]; timeZone?: string; start: string }): Harness => {
      let now = at(options.start);
      const quota = createQuotaService({
        store: target.store,
        rules: options.rules ?? [],
        timeZone: options.timeZone ?? 'UTC',
        now: () => now,
        logger: silentLogger,
        onStoreError: 'closed', // a store failure must show up as a failure here, never as an admission
        storeTimeoutMs: 5000,
      });
      return {
        quota,
        set(instant) {
          now = typeof instant === 'number' ? instant : at(instant);
        },
        async used(clientId, path) {
          const inspection = await quota.inspect(clientId, path);
          if (inspection.outcome !== 'ok') throw inspection.error;
          return Object.fromEntries(inspection.report.periods.map((p) => [p.period, p.used]));
        },
      };
    };

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

    it('rolls the minute over at the next minute, keeping the day and month', async () => {
      const id = client('minute');
      const path = '/openapi/v1/orders';
      const h = harness({ start: '2026-11-21T10:00:50Z', rules: [{ scope: 'global', apiPath: path, minute: 2 }] });
      expectAdmitted(await h.quota.consume(id, path));
      expectAdmitted(await h.quota.consume(id, path));
      h.set('2026-11-21T10:00:59.999Z');
      const rejected = await h.quota.consume(id, path);
      expectRejected(rejected);
      expect(rejected.retryAfterSeconds).toBe(1);
      h.set('2026-11-21T10:01:00.000Z');
      const next = await h.quota.consume(id, path);
      expectAdmitted(next);
      expect(next.periods.map((p) => [p.period, p.used, iso(p.resetAt)])).toEqual([
        ['minute', 1, '2026-11-21T10:02:00.000Z'],
        ['day', 3, '2026-11-22T00:00:00.000Z'],
        ['month', 3, '2026-12-01T00:00:00.000Z'],
      ]);
    });

    it('rolls the day over at midnight and the month over from 31 January to 1 February', async () => {
      const id = client('january');
      const path = '/openapi/v1/orders';
      const h = harness({ start: '2026-01-31T23:59:40Z', rules: [{ scope: 'global', apiPath: path, minute: 0, day: 0, month: 3 }] });
      for (let i = 0; i < 3; i++) expectAdmitted(await h.quota.consume(id, path));
      h.set('2026-01-31T23:59:59.999Z');
      const rejected = await h.quota.consume(id, path);
      expectRejected(rejected);
      expect(rejected.period).toBe('month');
      expect(iso(rejected.resetAt)).toBe('2026-02-01T00:00:00.000Z');
      h.set('2026-02-01T00:00:00.000Z');
      const february = await h.quota.consume(id, path);
      expectAdmitted(february);
      expect(february.periods.map((p) => [p.period, p.used, iso(p.resetAt)])).toEqual([
        ['minute', 1, '2026-02-01T00:01:00.000Z'],
        ['day', 1, '2026-02-02T00:00:00.000Z'],
        ['month', 1, '2026-03-01T00:00:00.000Z'], // February 2026 has 28 days, not 30
      ]);
    });

    it('ends February 2026 on the 28th and leap February 2028 on the 29th', async () => {
      const id = client('february');
      const path = '/openapi/v1/orders';
      const h = harness({ start: '2026-02-28T23:59:30Z', rules: [{ scope: 'global', apiPath: path, day: 1, month: 10 }] });
      const last = await h.quota.consume(id, path);
      expectAdmitted(last);
      // the minute, the day and February itself all end at 1 March 00:00
      expect(last.periods.map((p) => iso(p.resetAt))).toEqual(['2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
      expectRejected(await h.quota.consume(id, path));
      h.set('2026-03-01T00:00:00Z');
      const march = await h.quota.consume(id, path);
      expectAdmitted(march);
      expect(march.periods.map((p) => p.used)).toEqual([1, 1, 1]);

      // 2028 is a leap year: the 28th is followed by the 29th, and the month by March only after that.
      const leap = client('leap');
      h.set('2028-02-28T23:59:30Z');
      const d28 = await h.quota.consume(leap, path);
      expectAdmitted(d28);
      expect(d28.periods.map((p) => iso(p.resetAt))).toEqual(['2028-02-29T00:00:00.000Z', '2028-02-29T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
      h.set('2028-02-29T12:00:00Z');
      const d29 = await h.quota.consume(leap, path);
      expectAdmitted(d29);
      expect(d29.periods.map((p) => [p.period, p.used, iso(p.resetAt)])).toEqual([
        ['minute', 1, '2028-02-29T12:01:00.000Z'],
        ['day', 1, '2028-03-01T00:00:00.000Z'],
        ['month', 2, '2028-03-01T00:00:00.000Z'],
      ]);
      expectRejected(await h.quota.consume(leap, path));
      h.set('2028-03-01T00:00:00Z');
      const m = await h.quota.consume(leap, path);
      expectAdmitted(m);
      expect(m.periods.map((p) => p.used)).toEqual([1, 1, 1]);
    });

    it('rolls over at local midnight on DST days in a non-UTC zone (Europe/Berlin: 23 h and 25 h days)', async () => {
      const path = '/openapi/v1/orders';
      const rules: QuotaRule[] = [{ scope: 'global', apiPath: path, minute: 0, day: 2 }];
      // Spring forward: 29 March 2026 runs from 2026-03-28T23:00Z (00:00 CET) to 2026-03-29T22:00Z (00:00 CEST).
      const spring = client('spring');
      const h = harness({ start: '2026-03-28T23:00:00Z', rules, timeZone: 'Europe/Berlin' });
      const first = await h.quota.consume(spring, path);
      expectAdmitted(first);
      expect(iso(first.periods[1]!.resetAt)).toBe('2026-03-29T22:00:00.000Z');
      h.set('2026-03-29T12:00:00Z');
      expectAdmitted(await h.quota.consume(spring, path));
      h.set('2026-03-29T21:59:59.999Z'); // 23:59:59.999 CEST, still the 29th
      const full = await h.quota.consume(spring, path);
      expectRejected(full);
      expect(full.period).toBe('day');
      expect(iso(full.resetAt)).toBe('2026-03-29T22:00:00.000Z');
      h.set('2026-03-29T22:00:00Z');
      expectAdmitted(await h.quota.consume(spring, path));

      // Fall back: 25 October 2026 runs from 2026-10-24T22:00Z to 2026-10-25T23:00Z, 25 hours.
      const fall = client('fall');
      h.set('2026-10-24T22:00:00Z');
      const early = await h.quota.consume(fall, path);
      expectAdmitted(early);
      expect(iso(early.periods[1]!.resetAt)).toBe('2026-10-25T23:00:00.000Z');
      expect(iso(early.periods[2]!.resetAt)).toBe('2026-10-31T23:00:00.000Z'); // 1 November 00:00 CET
      h.set('2026-10-25T22:30:00Z'); // 23:30 CET: 24.5 hours later, the same local day
      expectAdmitted(await h.quota.consume(fall, path));
      expectRejected(await h.quota.consume(fall, path));
      h.set('2026-10-25T23:00:00Z');
      expectAdmitted(await h.quota.consume(fall, path));
    });

    it('answers get_quota without ever changing used', async () => {
      const id = client('inspect');
      const path = '/openapi/v1/orders';
      const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: path, minute: 2 }] });
      for (let i = 0; i < 3; i++) {
        const fresh = await h.quota.inspect(id, path);
        if (fresh.outcome !== 'ok') throw fresh.error;
        expect(fresh.time).toBe('2026-11-21T10:00:00.000Z');
        expect(fresh.report.periods.map((p) => p.used)).toEqual([0, 0, 0]);
        expect(fresh.report.periods[0]).toEqual({ period: 'minute', limit: 2, used: 0, remaining: 2, unlimited: false, reset_at: '2026-11-21T10:01:00.000Z' });
      }
      expectAdmitted(await h.quota.consume(id, path));
      for (let i = 0; i < 3; i++) expect(await h.used(id, path)).toEqual({ minute: 1, day: 1, month: 1 });
      expectAdmitted(await h.quota.consume(id, path));
      expectRejected(await h.quota.consume(id, path));
      for (let i = 0; i < 3; i++) expect(await h.used(id, path)).toEqual({ minute: 2, day: 2, month: 2 });
      // inspecting did not use up anything: the minute still has exactly 2 calls, not fewer
      h.set('2026-11-21T10:01:00Z');
      expectAdmitted(await h.quota.consume(id, path));
      expectAdmitted(await h.quota.consume(id, path));
      expectRejected(await h.quota.consume(id, path));
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

    it('lists the paths an application used in the current periods and forgets them on reset, one path or all', async () => {
      const h = harness({ start: '2026-11-21T10:00:00Z' });
      const id = client('usage');
      const other = client('usage-other');
      const paths = ['/openapi/v1/orders', '/openapi/v1/orders/:id', '/openapi/v1/get_fee'];
      for (const path of paths) expectAdmitted(await h.quota.consume(id, path));
      expectAdmitted(await h.quota.consume(other, paths[0]!));
      const usage = target.store.usage!;
      const now = at('2026-11-21T10:00:30Z');
      expect(await usage.paths(id, now)).toEqual([...paths].sort());

      expect(await usage.reset(id, paths[1])).toBe(1);
      expect(await usage.paths(id, now)).toEqual([paths[2]!, paths[0]!]);
      expect(await h.used(id, paths[1]!)).toEqual({ minute: 0, day: 0, month: 0 });
      expect(await usage.reset(id)).toBe(2);
      expect(await usage.paths(id, now)).toEqual([]);
      expect(await usage.paths(other, now)).toEqual([paths[0]]);
      expect(await usage.reset(id)).toBe(0);
    });

    it('keeps stored rules by scope, client and path: saved, found, listed, replaced and deleted', async () => {
      const rules = target.store.rules!;
      const id = client('rules');
      const path = `/openapi/v1/rules-${randomBytes(3).toString('hex')}`;
      const own: QuotaRule = { scope: 'client', clientId: id, apiPath: path, minute: 5 };
      const global: QuotaRule = { scope: 'global', apiPath: path, minute: 50, cost: 2 };
      expect(await rules.findRules(id, path)).toEqual({});
      await rules.saveRule(own);
      await rules.saveRule(global);
      expect(await rules.findRules(id, path)).toEqual({ client: own, global });
      expect(await rules.findRules('someone-else', path)).toEqual({ global });
      // A client id that looks like a key of another rule finds nothing of it.
      expect(await rules.findRules(`${id}","${path}`, path)).toEqual({ global });

      await rules.saveRule({ ...own, minute: 7 });
      expect((await rules.findRules(id, path)).client).toEqual({ ...own, minute: 7 });
      expect((await rules.listRules()).filter((rule) => rule.apiPath === path)).toHaveLength(2);

      expect(await rules.deleteRule({ scope: 'client', clientId: id, apiPath: path })).toBe(true);
      expect(await rules.deleteRule({ scope: 'client', clientId: id, apiPath: path })).toBe(false);
      expect(await rules.findRules(id, path)).toEqual({ global });
      expect(await rules.deleteRule({ scope: 'global', apiPath: path })).toBe(true);
      expect((await rules.listRules()).filter((rule) => rule.apiPath === path)).toEqual([]);
    });
  });
}
