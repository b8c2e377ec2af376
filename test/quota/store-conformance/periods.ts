/**
 * Quota store conformance. Periods: the minute, day and month roll over at their boundaries,
 * February in common and leap years, and local midnight on DST days.
 */
import { expect, it } from 'vitest';
import type { QuotaRule } from '../../../src/quota/index.js';
import { expectAdmitted, expectRejected, iso, type QuotaConformanceSuite } from './harness.js';

export function registerPeriodTests(suite: QuotaConformanceSuite): void {
  const { client, harness } = suite;

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
}
