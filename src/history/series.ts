/**
 * The answer of `{admin}/usage/history`: stored points as one series per endpoint, every bucket
 * of the range present (zero-filled), so a chart needs no gap logic.
 */
import { OTHER_PATHS, startOf, stepMs, type HistoryPoint, type HistoryStep } from './types.js';

/**
 * Endpoints one answer shows at most. Zero-filling makes every endpoint with a single call in
 * the range as long as the range (up to 1,000 points), so without a bound a caller who spreads
 * calls over made-up paths under a guard that names no endpoint (docs/quota.md) could make one
 * read of the history hundreds of megabytes. The calls of the endpoints left out are in `other`.
 */
export const MAX_HISTORY_SERIES = 100;

export interface SeriesPoint {
  /** Start of the UTC hour or day, ISO 8601. */
  at: string;
  admitted: number;
  rejected: number;
}

export interface EndpointSeries {
  api_path: string;
  points: SeriesPoint[];
}

export interface HistorySeries {
  /** The endpoints with the most calls in the range, at most MAX_HISTORY_SERIES, sorted by path. */
  series: EndpointSeries[];
  /**
   * The summed calls of the endpoints left out (`endpoints`: how many) and of those a process
   * recorded without their path (history/types.ts OTHER_PATHS); null when there are none.
   */
  other: { endpoints: number; points: SeriesPoint[] } | null;
}

type Counts = Pick<HistoryPoint, 'admitted' | 'rejected'>;

/** The bucket starts whose bucket overlaps [from, to). */
export function bucketStarts(step: HistoryStep, from: number, to: number): number[] {
  const out: number[] = [];
  for (let at = startOf(step, from); at < to; at += stepMs(step)) out.push(at);
  return out;
}

const calls = (byStart: Map<number, Counts>): number => {
  let sum = 0;
  for (const point of byStart.values()) sum += point.admitted + point.rejected;
  return sum;
};

const filled = (byStart: Map<number, Counts>, starts: readonly number[]): SeriesPoint[] =>
  starts.map((at) => {
    const point = byStart.get(at);
    return { at: new Date(at).toISOString(), admitted: point?.admitted ?? 0, rejected: point?.rejected ?? 0 };
  });

/** Adds the points of one endpoint into per-bucket sums. */
function addInto(sums: Map<number, Counts>, byStart: Map<number, Counts>): void {
  for (const [at, point] of byStart) {
    const sum = sums.get(at);
    if (sum) {
      sum.admitted += point.admitted;
      sum.rejected += point.rejected;
    } else sums.set(at, { admitted: point.admitted, rejected: point.rejected });
  }
}

/**
 * One series per endpoint with points (or `apiPath` alone when given). Past MAX_HISTORY_SERIES
 * endpoints, the busiest are shown (ties by path) and the rest summed into `other`, with the
 * calls recorded without their path (OTHER_PATHS), so the answer's totals stay every call's.
 */
export function toSeries(points: readonly HistoryPoint[], starts: readonly number[], apiPath?: string): HistorySeries {
  const byPath = new Map<string, Map<number, Counts>>();
  if (apiPath !== undefined) byPath.set(apiPath, new Map());
  for (const point of points) {
    let byStart = byPath.get(point.apiPath);
    if (!byStart) byPath.set(point.apiPath, (byStart = new Map()));
    byStart.set(point.start, point);
  }
  const sums = new Map<number, Counts>();
  const unnamed = byPath.get(OTHER_PATHS);
  if (unnamed) {
    addInto(sums, unnamed);
    byPath.delete(OTHER_PATHS);
  }
  const byPathOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  let shown = [...byPath.keys()];
  let left = 0;
  if (shown.length > MAX_HISTORY_SERIES) {
    const ranked = shown.map((path) => ({ path, calls: calls(byPath.get(path)!) })).sort((a, b) => b.calls - a.calls || byPathOrder(a.path, b.path));
    shown = ranked.slice(0, MAX_HISTORY_SERIES).map(({ path }) => path);
    for (const { path } of ranked.slice(MAX_HISTORY_SERIES)) addInto(sums, byPath.get(path)!);
    left = ranked.length - MAX_HISTORY_SERIES;
  }
  return {
    series: shown.sort(byPathOrder).map((path) => ({ api_path: path, points: filled(byPath.get(path)!, starts) })),
    other: left === 0 && !unnamed ? null : { endpoints: left, points: filled(sums, starts) },
  };
}
