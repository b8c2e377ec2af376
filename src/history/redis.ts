/**
 * Usage history in Redis (standalone or Cluster), shared by every process on it.
 *
 * Keys: one hash per application and UTC day for the hours, one per application and UTC month
 * for the days: `{<prefix>:h:<clientId, URI-encoded>}:hour:<day start ms>` and `...:day:<month
 * start ms>`, fields `<bucket start ms>:a:<apiPath>` (admitted) and `...:r:...` (rejected). The
 * hash tag keeps an application's keys in one Cluster slot. A flush is HINCRBY per field and one
 * PEXPIRE per key touched (relative, from the platform's clock: the key lives the retention past
 * the end of its day or month); a read is one HGETALL per key of the range.
 *
 * Round trips: one pipeline per flush; on a Cluster one per application (a Cluster pipeline
 * must stay on one node), sent together.
 */
import type { RedisLike } from '../core/store-clients.js';
import { DAY_MS, keptFrom, pointsOf, type HistoryPoint, type HistoryStep, type UsageHistoryStore } from './types.js';

/** What the history sends besides the quota's commands: an ioredis `Redis` or `Cluster` fits. */
interface HistoryPipeline {
  hincrby(key: string, field: string, increment: number): unknown;
  pexpire(key: string, ms: number): unknown;
  hgetall(key: string): unknown;
  exec(): Promise<[error: Error | null, result: unknown][] | null>;
}

export interface RedisHistoryStoreOptions {
  client: RedisLike;
  /** The quota store's prefix: keys start with `{<prefix>:h:`. */
  prefix: string;
}

/** Start of the UTC month holding `ms`. */
const monthOf = (ms: number): number => {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
};
const nextMonth = (month: number): number => {
  const date = new Date(month);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
};

/** The start of the hash that holds a bucket, and of the one after it. */
const hashOf = (step: HistoryStep, start: number): [number, number] => {
  if (step === 'hour') {
    const day = start - (start % DAY_MS);
    return [day, day + DAY_MS];
  }
  const month = monthOf(start);
  return [month, nextMonth(month)];
};

/** The history of an ioredis client with pipelines; undefined for a client without them. */
export function createRedisHistoryStore({ client, prefix }: RedisHistoryStoreOptions): UsageHistoryStore | undefined {
  if (typeof client.pipeline !== 'function') return undefined;
  const pipeline = () => (client.pipeline as () => unknown)() as HistoryPipeline;
  const keyOf = (clientId: string, step: HistoryStep, hashStart: number) => `{${prefix}:h:${encodeURIComponent(clientId)}}:${step}:${hashStart}`;

  const run = async (sent: HistoryPipeline): Promise<unknown[]> => {
    const replies = (await sent.exec()) ?? [];
    return replies.map(([error, reply]) => {
      if (error) throw error;
      return reply;
    });
  };

  return {
    kind: 'redis',
    async add(counts, now, retention) {
      const hourFrom = keptFrom('hour', now, retention);
      const dayFrom = keptFrom('day', now, retention);
      const byClient = new Map<string, HistoryPipeline>();
      const shared = client.isCluster === true ? undefined : pipeline();
      const expiring = new Set<string>();
      for (const point of pointsOf(counts)) {
        if (point.start < (point.step === 'hour' ? hourFrom : dayFrom)) continue;
        let sent = shared ?? byClient.get(point.clientId);
        if (!sent) byClient.set(point.clientId, (sent = pipeline()));
        const [hashStart, hashEnd] = hashOf(point.step, point.start);
        const key = keyOf(point.clientId, point.step, hashStart);
        if (point.admitted > 0) sent.hincrby(key, `${point.start}:a:${point.apiPath}`, point.admitted);
        if (point.rejected > 0) sent.hincrby(key, `${point.start}:r:${point.apiPath}`, point.rejected);
        if (!expiring.has(key)) {
          expiring.add(key);
          const days = point.step === 'hour' ? retention.hourlyDays : retention.dailyDays;
          sent.pexpire(key, Math.max(1, hashEnd + days * DAY_MS - now));
        }
      }
      await Promise.all((shared ? [shared] : [...byClient.values()]).map(run));
    },
    async read({ clientId, apiPath, step, from, to }) {
      const sent = pipeline();
      let hash = hashOf(step, from)[0];
      while (hash < to) {
        sent.hgetall(keyOf(clientId, step, hash));
        hash = hashOf(step, hash)[1];
      }
      const points = new Map<string, HistoryPoint>();
      for (const reply of await run(sent)) {
        for (const [field, value] of Object.entries((reply ?? {}) as Record<string, string>)) {
          const first = field.indexOf(':');
          const start = Number(field.slice(0, first));
          const path = field.slice(first + 3);
          if (start < from || start >= to || (apiPath !== undefined && path !== apiPath)) continue;
          const key = `${start}:${path}`;
          let point = points.get(key);
          if (!point) points.set(key, (point = { apiPath: path, step, start, admitted: 0, rejected: 0 }));
          point[field[first + 1] === 'a' ? 'admitted' : 'rejected'] += Number(value);
        }
      }
      return [...points.values()];
    },
  };
}
