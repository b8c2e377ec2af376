/**
 * The answer of `{admin}/usage/history`: stored points as one series per endpoint, every bucket
 * of the range present (zero-filled), so a chart needs no gap logic. The answer is folded from
 * the points as a store's round trips deliver them (foldSeries), so a read holds a few numbers
 * per stored point, never every point as an object (docs/operator.md#usage-history).
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

/** The bucket starts whose bucket overlaps [from, to). */
export function bucketStarts(step: HistoryStep, from: number, to: number): number[] {
  const out: number[] = [];
  for (let at = startOf(step, from); at < to; at += stepMs(step)) out.push(at);
  return out;
}

/**
 * One endpoint's calls so far. Sparse, `cells` is an array of (bucket index, admitted, rejected)
 * triples in the order they came, so an endpoint with a call or two costs a few numbers whatever
 * the range's length (an application's callers can make up hundreds of thousands of such
 * endpoints, docs/quota.md); once that would take more room than the range, dense: a
 * Float64Array with admitted at 2i and rejected at 2i + 1 for bucket i. Either way an endpoint
 * takes at most about 16 bytes per bucket, however the store splits its points.
 */
interface Endpoint {
  calls: number;
  cells: number[] | Float64Array;
}

/** Adds an endpoint's calls into per-bucket sums (dense). */
function addInto(sums: Float64Array, { cells }: Endpoint): void {
  if (cells instanceof Float64Array) {
    for (let i = 0; i < cells.length; i++) sums[i]! += cells[i]!;
    return;
  }
  for (let at = 0; at < cells.length; at += 3) {
    const bucket = 2 * cells[at]!;
    sums[bucket]! += cells[at + 1]!;
    sums[bucket + 1]! += cells[at + 2]!;
  }
}

const byPathOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The `count` endpoints with the most calls (ties by path), found without sorting them all:
 * one pass keeping the best so far in order.
 */
function busiest(byPath: ReadonlyMap<string, Endpoint>, count: number): string[] {
  const top: { path: string; calls: number }[] = [];
  const before = (path: string, calls: number, other: { path: string; calls: number }) => calls > other.calls || (calls === other.calls && path < other.path);
  for (const [path, { calls }] of byPath) {
    if (top.length === count && !before(path, calls, top[count - 1]!)) continue;
    let low = 0;
    let high = top.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (before(path, calls, top[middle]!)) high = middle;
      else low = middle + 1;
    }
    top.splice(low, 0, { path, calls });
    if (top.length > count) top.pop();
  }
  return top.map(({ path }) => path);
}

export interface SeriesFold {
  /** Folds in one round trip's points; those of the same endpoint and bucket add up. */
  add(points: readonly HistoryPoint[]): void;
  /** The answer of what was folded in; once, at the end. */
  finish(): HistorySeries;
}

/**
 * The answer for the buckets `starts` (UTC hours or days, `step` apart), folded from points
 * given a round trip at a time. Points outside the buckets, and with `apiPath` those of other
 * endpoints, are left out. The answer has one series per endpoint with points (or `apiPath`
 * alone when given). Past MAX_HISTORY_SERIES endpoints, the busiest are shown (ties by path) and
 * the rest summed into `other`, with the calls recorded without their path (OTHER_PATHS), so the
 * answer's totals stay every call's.
 */
export function foldSeries(step: HistoryStep, starts: readonly number[], apiPath?: string): SeriesFold {
  const first = starts[0] ?? 0;
  const size = stepMs(step);
  const byPath = new Map<string, Endpoint>();
  if (apiPath !== undefined) byPath.set(apiPath, { calls: 0, cells: [] });

  const sumsOf = (endpoints: Iterable<Endpoint>): Float64Array => {
    const sums = new Float64Array(2 * starts.length);
    for (const one of endpoints) addInto(sums, one);
    return sums;
  };

  return {
    add(points) {
      for (const { apiPath: path, start, admitted, rejected } of points) {
        const index = (start - first) / size;
        if (!(Number.isInteger(index) && index >= 0 && index < starts.length) || (apiPath !== undefined && path !== apiPath)) continue;
        const into = byPath.get(path);
        if (!into) {
          byPath.set(path, { calls: admitted + rejected, cells: [index, admitted, rejected] });
          continue;
        }
        into.calls += admitted + rejected;
        if (!(into.cells instanceof Float64Array)) {
          if (into.cells.length + 3 <= 2 * starts.length) {
            into.cells.push(index, admitted, rejected);
            continue;
          }
          const dense = new Float64Array(2 * starts.length);
          addInto(dense, into);
          into.cells = dense;
        }
        into.cells[2 * index]! += admitted;
        into.cells[2 * index + 1]! += rejected;
      }
    },
    finish() {
      const at = starts.map((start) => new Date(start).toISOString());
      const filled = (sums: Float64Array): SeriesPoint[] => at.map((iso, i) => ({ at: iso, admitted: sums[2 * i]!, rejected: sums[2 * i + 1]! }));
      const unnamed = byPath.get(OTHER_PATHS);
      byPath.delete(OTHER_PATHS);
      const shown = byPath.size > MAX_HISTORY_SERIES ? busiest(byPath, MAX_HISTORY_SERIES) : [...byPath.keys()];
      const series = shown.sort(byPathOrder).map((path) => ({ api_path: path, points: filled(sumsOf([byPath.get(path)!])) }));
      const left = byPath.size - shown.length;
      if (left === 0 && !unnamed) return { series, other: null };
      for (const path of shown) byPath.delete(path);
      return { series, other: { endpoints: left, points: filled(sumsOf(unnamed ? [...byPath.values(), unnamed] : byPath.values())) } };
    },
  };
}
