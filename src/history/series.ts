/**
 * The answer of `{admin}/usage/history`: stored points as one series per endpoint, every bucket
 * of the range present (zero-filled), so a chart needs no gap logic.
 */
import { startOf, stepMs, type HistoryPoint, type HistoryStep } from './types.js';

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

/** The bucket starts whose bucket overlaps [from, to). */
export function bucketStarts(step: HistoryStep, from: number, to: number): number[] {
  const out: number[] = [];
  for (let at = startOf(step, from); at < to; at += stepMs(step)) out.push(at);
  return out;
}

/** One series per endpoint with points (or `apiPath` alone when given), endpoints sorted. */
export function toSeries(points: readonly HistoryPoint[], starts: readonly number[], apiPath?: string): EndpointSeries[] {
  const byPath = new Map<string, Map<number, HistoryPoint>>();
  if (apiPath !== undefined) byPath.set(apiPath, new Map());
  for (const point of points) {
    let byStart = byPath.get(point.apiPath);
    if (!byStart) byPath.set(point.apiPath, (byStart = new Map()));
    byStart.set(point.start, point);
  }
  return [...byPath.keys()].sort().map((path) => ({
    api_path: path,
    points: starts.map((at) => {
      const point = byPath.get(path)!.get(at);
      return { at: new Date(at).toISOString(), admitted: point?.admitted ?? 0, rejected: point?.rejected ?? 0 };
    }),
  }));
}
