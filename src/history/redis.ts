/**
 * Usage history in Redis (standalone or Cluster), shared by every process on it.
 *
 * Keys: one hash per application and UTC day for the hours, one per application and UTC month
 * for the days: `{<prefix>:h:<clientId, URI-encoded>}:hour:<day start ms>` and `...:day:<month
 * start ms>`, fields `<bucket start ms>:a:<apiPath>` (admitted) and `...:r:...` (rejected). The
 * hash tag keeps an application's keys in one Cluster slot. A flush is HINCRBY per field and one
 * PEXPIRE per key touched (relative, from the platform's clock: the key lives the retention past
 * the end of its day or month); a read walks each key of the range with HSCAN.
 *
 * Round trips: one pipeline per flush; on a Cluster one per application (a Cluster pipeline
 * must stay on one node), sent together. A read: one HSCAN page at a time, each folded into the
 * answer before the next is asked for. The client's one connection is shared with the quota
 * guard and the OAuth store, whose answers wait behind a reply being read: a day's hash of an
 * application calling a thousand endpoints holds some 40,000 fields (a few hundred ms to read at
 * once), and 41 days of them in one pipeline are seconds, past their deadline
 * (docs/stores.md#usage-history).
 */
import { globEscape } from '../core/redis-scan.js';
import type { RedisLike } from '../core/store-clients.js';
import { roundTripAnswered } from '../core/store-guard.js';
import { DAY_MS, keptFrom, pointsOf, type HistoryPoint, type HistoryStep, type UsageHistoryStore } from './types.js';

/** What the history sends besides the quota's commands: an ioredis `Redis` or `Cluster` fits. */
interface HistoryPipeline {
  hincrby(key: string, field: string, increment: number): unknown;
  pexpire(key: string, ms: number): unknown;
  exec(): Promise<[error: Error | null, result: unknown][] | null>;
}

/** What a read sends: an ioredis `Redis` or `Cluster` has it. */
interface HashScanning {
  hscan(key: string, cursor: string, match: 'MATCH', pattern: string, count: 'COUNT', n: number): Promise<[cursor: string, fieldsAndValues: string[]]>;
}

/** Fields an HSCAN page holds about: some 100 kB of reply, a few milliseconds to read and fold. */
const READ_COUNT = 2000;

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

/** The history of an ioredis client (pipelines and HSCAN); undefined for a client without them. */
export function createRedisHistoryStore({ client, prefix }: RedisHistoryStoreOptions): UsageHistoryStore | undefined {
  const scanning = client as RedisLike & Partial<HashScanning>;
  if (typeof client.pipeline !== 'function' || typeof scanning.hscan !== 'function') return undefined;
  const hscan = scanning.hscan.bind(client);
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
    async read({ clientId, apiPath, step, from, to }, call, onPoints) {
      const match = apiPath === undefined ? '*' : `*:[ar]:${globEscape(apiPath)}`;
      for (let hash = hashOf(step, from)[0]; hash < to; hash = hashOf(step, hash)[1]) {
        const key = keyOf(clientId, step, hash);
        // HSCAN may answer a field twice when the hash grows during the walk (a flush adding to
        // today's hours): each field is counted once.
        const seen = new Set<string>();
        let cursor = '0';
        do {
          const [next, page] = await hscan(key, cursor, 'MATCH', match, 'COUNT', READ_COUNT);
          roundTripAnswered(call);
          const points: HistoryPoint[] = [];
          for (let i = 0; i < page.length; i += 2) {
            const field = page[i]!;
            if (seen.has(field)) continue;
            seen.add(field);
            const first = field.indexOf(':');
            const start = Number(field.slice(0, first));
            const path = field.slice(first + 3);
            if (start < from || start >= to || (apiPath !== undefined && path !== apiPath)) continue;
            const count = Number(page[i + 1]);
            const admitted = field[first + 1] === 'a';
            points.push({ apiPath: path, step, start, admitted: admitted ? count : 0, rejected: admitted ? 0 : count });
          }
          onPoints(points);
          cursor = next;
        } while (cursor !== '0');
      }
    },
  };
}
