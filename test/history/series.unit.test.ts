/**
 * The answer of `{admin}/usage/history` folded from points a round trip at a time
 * (src/history/series.ts, docs/operator.md#usage-history): zero-filled buckets, parts of a
 * bucket added up, the busiest MAX_HISTORY_SERIES endpoints with ties by path, the rest and the
 * calls recorded without their path in `other`, and one endpoint asked for.
 */
import { describe, expect, it } from 'vitest';
import { bucketStarts, foldSeries, MAX_HISTORY_SERIES, type SeriesPoint } from '../../src/history/series.js';
import { OTHER_PATHS, type HistoryPoint } from '../../src/history/types.js';
import { DAY, HOUR, T } from './fixtures.js';

const STARTS = bucketStarts('hour', T, T + 4 * HOUR);
const iso = (ms: number) => new Date(ms).toISOString();
const point = (apiPath: string, hour: number, admitted: number, rejected = 0): HistoryPoint => ({ apiPath, step: 'hour', start: T + hour * HOUR, admitted, rejected });
/** The four hours of STARTS, zero but for `busy` (hour index to [admitted, rejected]). */
const hours = (busy: Record<number, [number, number]> = {}): SeriesPoint[] =>
  STARTS.map((start, i) => ({ at: iso(start), admitted: busy[i]?.[0] ?? 0, rejected: busy[i]?.[1] ?? 0 }));

const fold = (pages: HistoryPoint[][], apiPath?: string) => {
  const answer = foldSeries('hour', STARTS, apiPath);
  for (const page of pages) answer.add(page);
  return answer.finish();
};

describe('foldSeries', () => {
  it('answers every bucket of every endpoint with points, sorted by path, the parts of a bucket added up', () => {
    const answer = fold([[point('/b', 1, 2, 1), point('/a', 3, 5)], [], [point('/b', 1, 1, 0), point('/b', 1, 0, 2)]]);
    expect(answer).toEqual({
      series: [
        { api_path: '/a', points: hours({ 3: [5, 0] }) },
        { api_path: '/b', points: hours({ 1: [3, 3] }) },
      ],
      other: null,
    });
    expect(fold([])).toEqual({ series: [], other: null });
  });

  it('leaves out points outside the buckets', () => {
    const outside = [point('/a', -1, 1), point('/a', 4, 1), { ...point('/a', 1, 1), start: T + HOUR + 1 }, { ...point('/a', 0, 1), start: T - DAY }];
    expect(fold([[...outside, point('/a', 2, 7)]])).toEqual({ series: [{ api_path: '/a', points: hours({ 2: [7, 0] }) }], other: null });
  });

  it(`shows the ${MAX_HISTORY_SERIES} endpoints with the most calls, ties by path, and sums the rest into other`, () => {
    // Endpoint e<i> has i calls in hour 0 (e000 none), up to 60: e060 to e159 tie with 60 each.
    const name = (i: number) => `/e${String(i).padStart(3, '0')}`;
    const points = Array.from({ length: 160 }, (_, i) => point(name(i), 0, Math.min(i, 60)));
    // Over many pages, and a busy endpoint's calls over every hour, a call at a time.
    const pages = Array.from({ length: 16 }, (_, page) => points.slice(page * 10, page * 10 + 10));
    pages.push([0, 1, 2, 3].flatMap((h) => Array.from({ length: 50 }, () => point('/busy', h, 1, 1))));
    const answer = fold(pages);
    // Shown: /busy (400 calls), then of the tied the first 99 by path.
    expect(answer.series.map((s) => s.api_path)).toEqual(['/busy', ...Array.from({ length: 99 }, (_, i) => name(60 + i))].sort());
    expect(answer.series.find((s) => s.api_path === '/busy')!.points).toEqual(hours({ 0: [50, 50], 1: [50, 50], 2: [50, 50], 3: [50, 50] }));
    // Left out: e000 to e059 (0 + 1 + ... + 59 calls) and e159 (60).
    expect(answer.other).toEqual({ endpoints: 61, points: hours({ 0: [(59 * 60) / 2 + 60, 0] }) });
  });

  it('adds the calls recorded without their path to other, which does not count them as an endpoint', () => {
    const answer = fold([[point('/a', 0, 1), point(OTHER_PATHS, 1, 4, 1)], [point(OTHER_PATHS, 1, 1)]]);
    expect(answer).toEqual({ series: [{ api_path: '/a', points: hours({ 0: [1, 0] }) }], other: { endpoints: 0, points: hours({ 1: [5, 1] }) } });
  });

  it('answers the endpoint asked for alone, zeros when it had no calls', () => {
    const points = [point('/a', 0, 1), point('/b', 2, 3), point(OTHER_PATHS, 1, 4)];
    expect(fold([points], '/b')).toEqual({ series: [{ api_path: '/b', points: hours({ 2: [3, 0] }) }], other: null });
    expect(fold([points], '/c')).toEqual({ series: [{ api_path: '/c', points: hours() }], other: null });
  });

  it('answers a long range of many points as it answers them one page each', () => {
    const starts = bucketStarts('day', T - 999 * DAY, T + 1);
    const day = (i: number, apiPath: string, admitted: number): HistoryPoint => ({ apiPath, step: 'day', start: starts[i]!, admitted, rejected: i % 3 });
    const points = starts.flatMap((_, i) => [day(i, '/dense', i + 1), ...(i % 100 === 0 ? [day(i, '/sparse', 1)] : [])]);
    const together = foldSeries('day', starts);
    together.add(points);
    const paged = foldSeries('day', starts);
    for (const one of points) paged.add([one]);
    const answer = paged.finish();
    expect(answer).toEqual(together.finish());
    expect(answer.series.map((s) => [s.api_path, s.points.reduce((sum, p) => sum + p.admitted, 0), s.points.length])).toEqual([
      ['/dense', (1000 * 1001) / 2, 1000],
      ['/sparse', 10, 1000],
    ]);
    expect(answer.series[0]!.points[999]).toEqual({ at: iso(starts[999]!), admitted: 1000, rejected: 0 });
  });
});
