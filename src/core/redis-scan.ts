/**
 * Listing keys by pattern for the admin API's occasional calls (an application's usage, a
 * deleted client's grants): SCAN on a Redis, on every master of a Cluster. Never on a request's
 * hot path.
 */
import { configurationError } from './errors.js';
import { roundTripAnswered, type StoreCall } from './store-guard.js';

/** What a scan needs beyond the stores' RedisLike: an ioredis Redis or Cluster has it. */
interface ScanningClient {
  scan?(cursor: string, match: 'MATCH', pattern: string, count: 'COUNT', n: number): Promise<[string, string[]]>;
  nodes?(role: 'master'): ScanningClient[];
}

/** A glob pattern that matches `text` literally (SCAN's MATCH). */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Every key matching `pattern`, on each master of a Cluster, a page at a time: `visit` has each
 * page before the next is asked for, so a caller that acts on the keys (deletes them) holds one
 * page's work at a time. SCAN walks the whole keyspace, the host's keys included: on a Redis of
 * millions of keys that is thousands of round trips and seconds, each round trip told to `call`
 * so that its deadline is the round trip's.
 */
export async function scanKeyPages(client: unknown, pattern: string, call: Pick<StoreCall, 'answered' | 'settled'> | undefined, visit: (keys: string[]) => void | Promise<void>): Promise<void> {
  const scanning = client as ScanningClient;
  const nodes = typeof scanning.nodes === 'function' ? scanning.nodes('master') : [scanning];
  for (const node of nodes) {
    if (typeof node.scan !== 'function') throw configurationError('invalid_option', 'client', 'listing keys needs a Redis client with SCAN (an ioredis Redis or Cluster)');
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      roundTripAnswered(call);
      if (found.length > 0) await visit(found);
      cursor = next;
    } while (cursor !== '0');
  }
}

/** Every key matching `pattern` (scanKeyPages), in one list. */
export async function scanKeys(client: unknown, pattern: string, call?: Pick<StoreCall, 'answered' | 'settled'>): Promise<string[]> {
  const keys: string[] = [];
  await scanKeyPages(client, pattern, call, (found) => {
    keys.push(...found);
  });
  return keys;
}
