/**
 * Usage history in process memory: one process's history, kept while it runs. Old points are
 * pruned by a flush, at most once an hour, against the retention.
 */
import { roundTripAnswered } from '../core/store-guard.js';
import { keptFrom, pointsOf, type HistoryPoint, type UsageHistoryStore } from './types.js';

/** Points a read scans before it lets the process serve other requests. */
const READ_PAGE = 20_000;

export interface MemoryHistoryStore extends UsageHistoryStore {
  readonly kind: 'memory';
  /** Points held, both steps. */
  readonly size: number;
}

export function createMemoryHistoryStore(): MemoryHistoryStore {
  /** Per client: point key (step, start, path) to the point. */
  const byClient = new Map<string, Map<string, HistoryPoint>>();
  let size = 0;
  let prunedAt = -1;

  const prune = (hourFrom: number, dayFrom: number): void => {
    for (const [clientId, points] of byClient) {
      for (const [key, point] of points) {
        if (point.start < (point.step === 'hour' ? hourFrom : dayFrom)) {
          points.delete(key);
          size--;
        }
      }
      if (points.size === 0) byClient.delete(clientId);
    }
  };

  return {
    kind: 'memory',
    get size() {
      return size;
    },
    async add(counts, now, retention) {
      for (const { clientId, ...point } of pointsOf(counts)) {
        let points = byClient.get(clientId);
        if (!points) byClient.set(clientId, (points = new Map()));
        const key = `${point.step}:${point.start}:${point.apiPath}`;
        const known = points.get(key);
        if (known) {
          known.admitted += point.admitted;
          known.rejected += point.rejected;
        } else {
          points.set(key, point);
          size++;
        }
      }
      // Points age by the hour: one scan per hour is enough.
      const hourFrom = keptFrom('hour', now, retention);
      if (hourFrom !== prunedAt) prune(hourFrom, keptFrom('day', now, retention));
      prunedAt = hourFrom;
    },
    async read({ clientId, apiPath, step, from, to }, call, onPoints) {
      let page: HistoryPoint[] = [];
      let scanned = 0;
      for (const point of byClient.get(clientId)?.values() ?? []) {
        if (point.step === step && point.start >= from && point.start < to && (apiPath === undefined || point.apiPath === apiPath)) page.push({ ...point });
        // An application's points can be millions (docs/operator.md#usage-history): other requests
        // are served between pages, each told to `call` as a round trip of a store would be.
        if (++scanned % READ_PAGE === 0) {
          onPoints(page);
          page = [];
          await new Promise((resolve) => setImmediate(resolve));
          roundTripAnswered(call);
        }
      }
      onPoints(page);
    },
  };
}
