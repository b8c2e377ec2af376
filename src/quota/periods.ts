/**
 * Calendar-aligned quota periods in an IANA time zone, computed with `Intl.DateTimeFormat` only.
 *
 * A period's window is `[start, end)` in UTC milliseconds: the local minute, the local calendar
 * day and the local calendar month that contain an instant. `end` is the start of the next
 * period, which is the `reset_at` every answer reports (docs/quota.md#periods). Consequences worth knowing:
 *
 * - a day is 23, 24 or 25 hours long on DST days (23.5 / 24.5 on Australia/Lord_Howe);
 * - a month is 28, 29, 30 or 31 local days, never a fixed 30 days;
 * - a day whose midnight does not exist (DST starting at 00:00, e.g. America/Santiago) starts at
 *   the first instant that shows that date, i.e. at the transition itself;
 * - zones with odd offsets (Asia/Kathmandu +05:45) start their days at odd UTC times.
 *
 * Day and month boundaries are found by a bounded binary search over the zone's wall clock (at
 * most ~18 `Intl` calls), done once per day and once per month: the calendar caches the current
 * windows, so the guard's per-call cost is a few comparisons.
 */

import { configurationError } from '../core/errors.js';

export type QuotaPeriod = 'minute' | 'day' | 'month';

/** The periods in the order every API of the quota reports them. */
export const QUOTA_PERIODS: readonly QuotaPeriod[] = ['minute', 'day', 'month'];

export interface PeriodWindow {
  readonly period: QuotaPeriod;
  /** First instant of the period, UTC ms (inclusive). */
  readonly start: number;
  /** First instant of the next period, UTC ms (exclusive): the period's `reset_at`. */
  readonly end: number;
}

/** Wall-clock fields of an instant in a zone. `month` is 1-12. */
export interface ZonedDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const EN_US = /^(\d{1,2})\/(\d{1,2})\/(\d{4,}), (\d{1,2}):(\d{2}):(\d{2})$/;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Wider than any UTC offset (+14:00 / -12:00) plus the longest gap (Samoa skipped 24 h in 2011). */
const SEARCH_SPAN_MS = 40 * HOUR_MS;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  const expected = `must be an IANA time zone such as "UTC" or "Europe/Berlin", got ${JSON.stringify(timeZone)}`;
  if (typeof timeZone !== 'string' || timeZone.trim() === '') throw configurationError('invalid_option', 'timeZone', expected);
  try {
    return new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch (error) {
    // ICU's RangeError for a zone it does not know.
    throw configurationError('invalid_option', 'timeZone', expected, error);
  }
}

/**
 * The calendar of one time zone: which minute, day and month an instant falls in.
 *
 * @example
 * const calendar = new QuotaCalendar('Europe/Berlin');
 * calendar.window('day', Date.UTC(2026, 2, 29, 12)); // { start: 2026-03-28T23:00Z, end: 2026-03-29T22:00Z }: 23 hours
 */
export class QuotaCalendar {
  /** The zone as ICU canonicalised it, e.g. `UTC` or `Europe/Berlin`. */
  readonly timeZone: string;
  private readonly format: Intl.DateTimeFormat;
  private readonly fixedUtc: boolean;
  private minuteCache: PeriodWindow | undefined;
  private dayCache: PeriodWindow | undefined;
  private monthCache: PeriodWindow | undefined;

  /** @throws ConfigurationError (`invalid_option`, field `timeZone`) for a zone ICU does not know. */
  constructor(timeZone = 'UTC') {
    this.format = formatterFor(timeZone);
    this.timeZone = this.format.resolvedOptions().timeZone;
    this.fixedUtc = this.timeZone === 'UTC' || this.timeZone === 'Etc/UTC' || this.timeZone === 'Etc/GMT';
  }

  /** The wall clock of `instant` (UTC ms) in this zone, to the second. */
  zoned(instant: number): ZonedDateTime {
    checkInstant(instant);
    if (this.fixedUtc) {
      const d = new Date(instant);
      return {
        year: d.getUTCFullYear(),
        month: d.getUTCMonth() + 1,
        day: d.getUTCDate(),
        hour: d.getUTCHours(),
        minute: d.getUTCMinutes(),
        second: d.getUTCSeconds(),
      };
    }
    // `format` is ~5x faster than `formatToParts`; en-US renders "3/29/2026, 14:05:09".
    const match = EN_US.exec(this.format.format(instant));
    if (match) {
      return {
        year: Number(match[3]),
        month: Number(match[1]),
        day: Number(match[2]),
        hour: Number(match[4]) % 24, // some ICU versions render midnight as 24 even with h23
        minute: Number(match[5]),
        second: Number(match[6]),
      };
    }
    const out: ZonedDateTime = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
    for (const part of this.format.formatToParts(instant)) {
      switch (part.type) {
        case 'year':
        case 'month':
        case 'day':
        case 'minute':
        case 'second':
          out[part.type] = Number(part.value);
          break;
        case 'hour':
          out.hour = Number(part.value) % 24;
          break;
        default:
          break;
      }
    }
    return out;
  }

  /** The zone's UTC offset at `instant`, in ms (e.g. +3 600 000 for CET). */
  offset(instant: number): number {
    if (this.fixedUtc) return 0;
    const z = this.zoned(instant);
    const wall = Date.UTC(z.year, z.month - 1, z.day, z.hour, z.minute, z.second);
    return wall - Math.floor(instant / 1000) * 1000;
  }

  /** The window of `period` that contains `instant`. */
  window(period: QuotaPeriod, instant: number): PeriodWindow {
    switch (period) {
      case 'minute':
        return this.minute(instant);
      case 'day':
        return this.day(instant);
      case 'month':
        return this.month(instant);
      default:
        throw configurationError('invalid_argument', 'period', `must be minute, day or month, got ${JSON.stringify(period)}`);
    }
  }

  /** The minute, day and month windows of `instant`, in that order. */
  windows(instant: number): [PeriodWindow, PeriodWindow, PeriodWindow] {
    return [this.minute(instant), this.day(instant), this.month(instant)];
  }

  private minute(instant: number): PeriodWindow {
    const cached = this.minuteCache;
    if (cached && cached.start <= instant && instant < cached.end) return cached;
    checkInstant(instant);
    const local = instant + this.offset(instant);
    let start = instant - mod(local, MINUTE_MS);
    let end = start + MINUTE_MS;
    // Only historical offsets with seconds (LMT) could make a minute straddle a day boundary;
    // clamping keeps the minute nested in its day either way.
    const day = this.day(instant);
    start = Math.max(start, day.start);
    end = Math.min(end, day.end);
    return (this.minuteCache = { period: 'minute', start, end });
  }

  private day(instant: number): PeriodWindow {
    const cached = this.dayCache;
    if (cached && cached.start <= instant && instant < cached.end) return cached;
    const z = this.zoned(instant);
    const start = this.startOfDate(z.year, z.month, z.day);
    const end = this.startOfDate(z.year, z.month, z.day + 1);
    return (this.dayCache = contain('day', start, end, instant));
  }

  private month(instant: number): PeriodWindow {
    const cached = this.monthCache;
    if (cached && cached.start <= instant && instant < cached.end) return cached;
    const z = this.zoned(instant);
    const start = this.startOfDate(z.year, z.month, 1);
    const end = this.startOfDate(z.year, z.month + 1, 1);
    return (this.monthCache = contain('month', start, end, instant));
  }

  /**
   * The first instant whose local date is on or after year-month-day (month and day may
   * overflow: day 32 is the next month's 1st, month 13 next year's January). That is local
   * midnight, or the end of the DST gap when midnight is skipped.
   */
  startOfDate(year: number, month: number, day: number): number {
    const wallMidnight = Date.UTC(year, month - 1, day);
    if (this.fixedUtc) return wallMidnight;
    const target = new Date(wallMidnight);
    const key = dateKey(target.getUTCFullYear(), target.getUTCMonth() + 1, target.getUTCDate());
    // Fast path (every ordinary day): local midnight exists once; two fixed-point steps find it,
    // and the check proves it is the first second of the date.
    const first = wallMidnight - this.offset(wallMidnight);
    const second = wallMidnight - this.offset(first);
    if (this.isFirstSecondOf(second, key)) return second;
    if (first !== second && this.isFirstSecondOf(first, key)) return first;
    // General case (DST gap at midnight, skipped dates): binary search, in whole seconds, for
    // the first instant whose local date key is >= key. Transitions happen on whole seconds.
    let lo = Math.floor((wallMidnight - SEARCH_SPAN_MS) / 1000);
    let hi = Math.ceil((wallMidnight + SEARCH_SPAN_MS) / 1000);
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.localDateKey(mid * 1000) >= key) hi = mid;
      else lo = mid + 1;
    }
    return lo * 1000;
  }

  private isFirstSecondOf(candidate: number, key: number): boolean {
    return this.localDateKey(candidate) === key && this.localDateKey(candidate - 1000) < key;
  }

  private localDateKey(instant: number): number {
    const z = this.zoned(instant);
    return dateKey(z.year, z.month, z.day);
  }
}

function dateKey(year: number, month: number, day: number): number {
  return year * 10_000 + month * 100 + day;
}

function mod(value: number, divisor: number): number {
  return ((value % divisor) + divisor) % divisor;
}

function checkInstant(instant: number): void {
  if (!Number.isFinite(instant)) throw configurationError('invalid_argument', 'instant', `must be a finite number of ms since the epoch, got ${instant}`);
}

/**
 * A window that surely contains the instant. Only a zone whose clock jumps back across midnight
 * could break that (none does today); widening then is better than a window that misses `now`.
 */
function contain(period: QuotaPeriod, start: number, end: number, instant: number): PeriodWindow {
  return { period, start: Math.min(start, instant), end: Math.max(end, instant + 1) };
}

/** Checks a zone name the way `QuotaCalendar` does; returns its canonical form. */
export function checkTimeZone(timeZone: string): string {
  return formatterFor(timeZone).resolvedOptions().timeZone;
}
