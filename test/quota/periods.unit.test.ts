/**
 * Periods minute, day and month are calendar-aligned (the minute, the day, the month in the
 * configured time zone, default UTC); reset_at is the start of the next one (docs/quota.md).
 */
import { describe, expect, it } from 'vitest';
import { QuotaCalendar, checkTimeZone, type QuotaPeriod } from '../../src/quota/periods.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const at = (s: string): number => Date.parse(s);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Case {
  zone: string;
  period: QuotaPeriod;
  instant: string;
  start: string;
  end: string;
  note: string;
}

const cases: Case[] = [
  // UTC
  { zone: 'UTC', period: 'minute', instant: '2026-11-21T10:00:30.500Z', start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T10:01:00.000Z', note: 'mid-minute' },
  { zone: 'UTC', period: 'minute', instant: '2026-11-21T10:00:00.000Z', start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T10:01:00.000Z', note: 'first ms of a minute' },
  { zone: 'UTC', period: 'minute', instant: '2026-11-21T10:00:59.999Z', start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T10:01:00.000Z', note: 'last ms of a minute' },
  { zone: 'UTC', period: 'day', instant: '2026-11-21T23:59:59.999Z', start: '2026-11-21T00:00:00.000Z', end: '2026-11-22T00:00:00.000Z', note: 'last ms of a day' },
  { zone: 'UTC', period: 'day', instant: '2026-11-22T00:00:00.000Z', start: '2026-11-22T00:00:00.000Z', end: '2026-11-23T00:00:00.000Z', note: 'first ms of a day' },
  { zone: 'UTC', period: 'month', instant: '2026-01-31T23:59:59.999Z', start: '2026-01-01T00:00:00.000Z', end: '2026-02-01T00:00:00.000Z', note: '31 Jan is still January' },
  { zone: 'UTC', period: 'month', instant: '2026-02-01T00:00:00.000Z', start: '2026-02-01T00:00:00.000Z', end: '2026-03-01T00:00:00.000Z', note: '1 Feb starts a 28-day month' },
  { zone: 'UTC', period: 'day', instant: '2026-02-28T12:00:00.000Z', start: '2026-02-28T00:00:00.000Z', end: '2026-03-01T00:00:00.000Z', note: '28 Feb 2026 is followed by 1 Mar' },
  { zone: 'UTC', period: 'month', instant: '2026-02-28T23:59:59.999Z', start: '2026-02-01T00:00:00.000Z', end: '2026-03-01T00:00:00.000Z', note: 'February 2026 ends on the 28th' },
  { zone: 'UTC', period: 'day', instant: '2028-02-28T12:00:00.000Z', start: '2028-02-28T00:00:00.000Z', end: '2028-02-29T00:00:00.000Z', note: '28 Feb 2028 is followed by the 29th' },
  { zone: 'UTC', period: 'day', instant: '2028-02-29T12:00:00.000Z', start: '2028-02-29T00:00:00.000Z', end: '2028-03-01T00:00:00.000Z', note: 'leap day' },
  { zone: 'UTC', period: 'month', instant: '2028-02-29T23:59:59.999Z', start: '2028-02-01T00:00:00.000Z', end: '2028-03-01T00:00:00.000Z', note: 'leap February has 29 days' },
  { zone: 'UTC', period: 'month', instant: '2100-02-15T00:00:00.000Z', start: '2100-02-01T00:00:00.000Z', end: '2100-03-01T00:00:00.000Z', note: '2100 is not a leap year' },
  { zone: 'UTC', period: 'day', instant: '2026-12-31T23:59:59.999Z', start: '2026-12-31T00:00:00.000Z', end: '2027-01-01T00:00:00.000Z', note: 'year roll, day' },
  { zone: 'UTC', period: 'month', instant: '2026-12-31T23:59:59.999Z', start: '2026-12-01T00:00:00.000Z', end: '2027-01-01T00:00:00.000Z', note: 'year roll, December' },
  { zone: 'UTC', period: 'month', instant: '2027-01-01T00:00:00.000Z', start: '2027-01-01T00:00:00.000Z', end: '2027-02-01T00:00:00.000Z', note: 'year roll, January' },
  { zone: 'UTC', period: 'month', instant: '2026-04-15T00:00:00.000Z', start: '2026-04-01T00:00:00.000Z', end: '2026-05-01T00:00:00.000Z', note: '30-day April' },

  // Europe/Berlin: CET +01:00, CEST +02:00; DST from 29 Mar 2026 02:00 to 25 Oct 2026 03:00 local
  { zone: 'Europe/Berlin', period: 'day', instant: '2026-03-29T12:00:00.000Z', start: '2026-03-28T23:00:00.000Z', end: '2026-03-29T22:00:00.000Z', note: 'spring forward: a 23-hour day' },
  { zone: 'Europe/Berlin', period: 'day', instant: '2026-10-25T12:00:00.000Z', start: '2026-10-24T22:00:00.000Z', end: '2026-10-25T23:00:00.000Z', note: 'fall back: a 25-hour day' },
  { zone: 'Europe/Berlin', period: 'day', instant: '2026-10-25T00:30:00.000Z', start: '2026-10-24T22:00:00.000Z', end: '2026-10-25T23:00:00.000Z', note: 'first 02:30 of the repeated hour' },
  { zone: 'Europe/Berlin', period: 'day', instant: '2026-10-25T01:30:00.000Z', start: '2026-10-24T22:00:00.000Z', end: '2026-10-25T23:00:00.000Z', note: 'second 02:30 of the repeated hour' },
  { zone: 'Europe/Berlin', period: 'minute', instant: '2026-03-29T00:59:30.000Z', start: '2026-03-29T00:59:00.000Z', end: '2026-03-29T01:00:00.000Z', note: '01:59 CET, just before the jump' },
  { zone: 'Europe/Berlin', period: 'minute', instant: '2026-03-29T01:00:00.000Z', start: '2026-03-29T01:00:00.000Z', end: '2026-03-29T01:01:00.000Z', note: '03:00 CEST, just after the jump' },
  { zone: 'Europe/Berlin', period: 'month', instant: '2026-03-15T12:00:00.000Z', start: '2026-02-28T23:00:00.000Z', end: '2026-03-31T22:00:00.000Z', note: 'March starts in CET, ends in CEST' },
  { zone: 'Europe/Berlin', period: 'month', instant: '2026-10-31T22:59:59.999Z', start: '2026-09-30T22:00:00.000Z', end: '2026-10-31T23:00:00.000Z', note: 'October starts in CEST, ends in CET' },
  { zone: 'Europe/Berlin', period: 'month', instant: '2026-12-31T22:59:59.999Z', start: '2026-11-30T23:00:00.000Z', end: '2026-12-31T23:00:00.000Z', note: 'year roll at local midnight' },
  { zone: 'Europe/Berlin', period: 'month', instant: '2026-12-31T23:00:00.000Z', start: '2026-12-31T23:00:00.000Z', end: '2027-01-31T23:00:00.000Z', note: 'already January locally' },

  // America/New_York: EST -05:00, EDT -04:00; DST 8 Mar 2026 to 1 Nov 2026
  { zone: 'America/New_York', period: 'day', instant: '2026-03-08T12:00:00.000Z', start: '2026-03-08T05:00:00.000Z', end: '2026-03-09T04:00:00.000Z', note: 'spring forward: 23 hours' },
  { zone: 'America/New_York', period: 'day', instant: '2026-11-01T12:00:00.000Z', start: '2026-11-01T04:00:00.000Z', end: '2026-11-02T05:00:00.000Z', note: 'fall back: 25 hours' },
  { zone: 'America/New_York', period: 'month', instant: '2026-02-01T04:59:59.999Z', start: '2026-01-01T05:00:00.000Z', end: '2026-02-01T05:00:00.000Z', note: '31 Jan 23:59:59 EST is still January' },
  { zone: 'America/New_York', period: 'month', instant: '2026-02-01T05:00:00.000Z', start: '2026-02-01T05:00:00.000Z', end: '2026-03-01T05:00:00.000Z', note: '1 Feb 00:00 EST' },

  // Asia/Kathmandu: +05:45, no DST
  { zone: 'Asia/Kathmandu', period: 'minute', instant: '2026-01-31T20:00:30.000Z', start: '2026-01-31T20:00:00.000Z', end: '2026-01-31T20:01:00.000Z', note: 'minutes still align with UTC minutes' },
  { zone: 'Asia/Kathmandu', period: 'day', instant: '2026-01-31T20:00:00.000Z', start: '2026-01-31T18:15:00.000Z', end: '2026-02-01T18:15:00.000Z', note: 'the day starts at 18:15 UTC' },
  { zone: 'Asia/Kathmandu', period: 'month', instant: '2026-01-31T18:14:59.999Z', start: '2025-12-31T18:15:00.000Z', end: '2026-01-31T18:15:00.000Z', note: '31 Jan 23:59:59 local' },
  { zone: 'Asia/Kathmandu', period: 'month', instant: '2026-01-31T18:15:00.000Z', start: '2026-01-31T18:15:00.000Z', end: '2026-02-28T18:15:00.000Z', note: '1 Feb 00:00 local' },

  // Australia/Lord_Howe: +10:30 standard, +11:00 in DST (a 30-minute shift); DST ends 5 Apr 2026, starts 4 Oct 2026
  { zone: 'Australia/Lord_Howe', period: 'day', instant: '2026-04-05T02:00:00.000Z', start: '2026-04-04T13:00:00.000Z', end: '2026-04-05T13:30:00.000Z', note: '24.5-hour day' },
  { zone: 'Australia/Lord_Howe', period: 'day', instant: '2026-10-04T02:00:00.000Z', start: '2026-10-03T13:30:00.000Z', end: '2026-10-04T13:00:00.000Z', note: '23.5-hour day' },
  { zone: 'Australia/Lord_Howe', period: 'minute', instant: '2026-10-04T02:00:59.000Z', start: '2026-10-04T02:00:00.000Z', end: '2026-10-04T02:01:00.000Z', note: 'minute on a DST day' },

  // America/Santiago: DST starts 6 Sep 2026 at 00:00 local, so that day has no midnight
  { zone: 'America/Santiago', period: 'day', instant: '2026-09-06T12:00:00.000Z', start: '2026-09-06T04:00:00.000Z', end: '2026-09-07T03:00:00.000Z', note: 'the day starts at 01:00, the end of the gap' },
  { zone: 'America/Santiago', period: 'day', instant: '2026-09-06T03:59:59.999Z', start: '2026-09-05T04:00:00.000Z', end: '2026-09-06T04:00:00.000Z', note: 'the day before ends at the gap' },

  // Pacific/Apia skipped 30 December 2011 (from -10:00 to +14:00)
  { zone: 'Pacific/Apia', period: 'day', instant: '2011-12-30T09:59:59.999Z', start: '2011-12-29T10:00:00.000Z', end: '2011-12-30T10:00:00.000Z', note: '29 Dec, the last day at -10' },
  { zone: 'Pacific/Apia', period: 'day', instant: '2011-12-30T10:00:00.000Z', start: '2011-12-30T10:00:00.000Z', end: '2011-12-31T10:00:00.000Z', note: '31 Dec follows 29 Dec directly' },
];

describe('QuotaCalendar windows', () => {
  it.each(cases)('$zone $period at $instant: $note', ({ zone, period, instant, start, end }) => {
    const window = new QuotaCalendar(zone).window(period, at(instant));
    expect({ start: iso(window.start), end: iso(window.end) }).toEqual({ start, end });
  });

  it('gives every month its own length, never a fixed 30 days', () => {
    const calendar = new QuotaCalendar('UTC');
    const lengths = [2026, 2028].flatMap((year) =>
      Array.from({ length: 12 }, (_, m) => {
        const w = calendar.window('month', Date.UTC(year, m, 15));
        return (w.end - w.start) / DAY;
      }),
    );
    expect(lengths).toEqual([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]);
  });

  it('returns the same windows whatever order instants are asked in (the cache is invisible)', () => {
    const instants = ['2026-03-29T12:00:00Z', '2026-10-25T01:30:00Z', '2026-01-01T00:00:00Z', '2026-03-29T00:59:59Z', '2026-03-29T01:00:00Z'].map(at);
    const shared = new QuotaCalendar('Europe/Berlin');
    for (const instant of [...instants, ...instants.reverse()]) {
      expect(shared.windows(instant)).toEqual(new QuotaCalendar('Europe/Berlin').windows(instant));
    }
  });
});

describe('QuotaCalendar invariants over a whole year', () => {
  const zones = [
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Asia/Kathmandu',
    'Australia/Lord_Howe',
    'America/Santiago',
    'Pacific/Chatham',
    'America/St_Johns',
    'Asia/Tehran',
    'Africa/Casablanca',
  ];

  it.each(zones)('%s: windows contain the instant, nest, tile without gaps, and start at local midnight / the 1st', (zone) => {
    const calendar = new QuotaCalendar(zone);
    const from = Date.UTC(2026, 0, 1);
    const problems: string[] = [];
    const check = (ok: boolean, what: string, t: number): void => {
      if (!ok && problems.length < 10) problems.push(`${what} at ${iso(t)}`);
    };
    let previousDay: { start: number; end: number } | undefined;
    let days = 0;
    // every 167 minutes through 2026 (3 156 instants), which lands on every local day at least twice
    for (let t = from; t < from + 366 * DAY; t += 167 * 60_000) {
      const [minute, day, month] = calendar.windows(t);
      for (const w of [minute, day, month]) check(w.start <= t && t < w.end, `${w.period} window misses the instant`, t);
      check(minute.end - minute.start === 60_000, 'minute is not 60 s', t);
      check(day.start <= minute.start && minute.end <= day.end, 'minute not inside its day', t);
      check(month.start <= day.start && day.end <= month.end, 'day not inside its month', t);
      // 23 to 25 hours (Lord Howe: 23.5 / 24.5)
      check(day.end - day.start >= 23 * HOUR && day.end - day.start <= 25 * HOUR, 'day length out of 23..25 h', t);
      const monthDays = (month.end - month.start) / DAY;
      check(monthDays > 27.9 && monthDays < 31.1, 'month length out of 28..31 days', t);
      if (previousDay && previousDay.start !== day.start) {
        check(day.start === previousDay.end, 'days do not tile', t);
        days++;
      }
      previousDay = day;
      // the day starts at local 00:00 (or at the end of a DST gap at midnight); its previous second is the day before
      const first = calendar.zoned(day.start);
      const before = calendar.zoned(day.start - 1000);
      const now = calendar.zoned(t);
      const sameDate = (a: typeof now, b: typeof now) => a.year === b.year && a.month === b.month && a.day === b.day;
      check(sameDate(first, now) && !sameDate(before, now), 'day does not start at the first second of its date', t);
      check(first.minute === 0 && first.second === 0 && first.hour <= 1, 'day does not start at 00:00 (or 01:00 after a gap)', t);
      check(calendar.zoned(month.start).day === 1 && calendar.zoned(month.end).day === 1, 'month does not run from the 1st to the 1st', t);
      check(calendar.zoned(month.end - 1000).month === now.month, 'month ends early', t);
    }
    expect(problems).toEqual([]);
    expect(days).toBeGreaterThanOrEqual(364);
  });
});

describe('QuotaCalendar.zoned', () => {
  it('reads the same wall clock as Intl formatToParts', () => {
    for (const zone of ['Europe/Berlin', 'Asia/Kathmandu', 'America/St_Johns']) {
      const calendar = new QuotaCalendar(zone);
      const parts = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
      for (let i = 0; i < 200; i++) {
        const t = Date.UTC(2026, 0, 1) + i * 1_234_567_891;
        const p = Object.fromEntries(parts.formatToParts(t).map((x) => [x.type, x.value]));
        expect(calendar.zoned(t)).toEqual({
          year: Number(p.year),
          month: Number(p.month),
          day: Number(p.day),
          hour: Number(p.hour) % 24,
          minute: Number(p.minute),
          second: Number(p.second),
        });
      }
    }
  });
});

describe('time zone validation', () => {
  it('accepts IANA names and canonicalises them', () => {
    expect(new QuotaCalendar().timeZone).toBe('UTC');
    expect(new QuotaCalendar('Europe/Berlin').timeZone).toBe('Europe/Berlin');
    expect(checkTimeZone('utc')).toBe('UTC');
    expect(checkTimeZone('europe/berlin')).toBe('Europe/Berlin');
  });

  it.each(['Mars/Olympus_Mons', '', 42])('refuses %j with an invalid_option naming timeZone', (zone) => {
    expect(() => new QuotaCalendar(zone as string)).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_option', field: 'timeZone', message: expect.stringContaining(JSON.stringify(zone)) }),
    );
  });

  it('refuses a non-finite instant', () => {
    expect(() => new QuotaCalendar('Europe/Berlin').window('day', Number.NaN)).toThrow(expect.objectContaining({ code: 'invalid_argument', field: 'instant' }));
  });

  it('refuses a period other than minute, day and month', () => {
    expect(() => new QuotaCalendar().window('week' as QuotaPeriod, 0)).toThrow(expect.objectContaining({ code: 'invalid_argument', field: 'period', message: expect.stringContaining('"week"') }));
  });
});
