/**
 * Quota counters in Redis (standalone or Cluster), shared by every process of the platform.
 *
 * One Lua script per guarded call, sent with EVALSHA (the SHA is computed here; on NOSCRIPT,
 * e.g. after a restart or on a Cluster node that has not seen it yet, the call is repeated once
 * with EVAL, which also caches the script). Redis runs a script atomically, so "check every
 * period, then charge all or none" needs no lock and no retry. Calls that arrive in the same
 * turn of the event loop go to Redis in one write, each still its own EVALSHA (redis-script.ts).
 *
 * Keys: `{<prefix>:<clientId, URI-encoded>:<apiPath>}:<period>:<bucket start ms>`. Everything of
 * one call shares the hash tag in braces, hence one Cluster slot, as a script requires.
 * Every key gets a TTL, when it is created, that ends at its bucket's end plus a small grace
 * (PEXPIRE, relative, computed from the service clock: Redis's own clock and the application's
 * may disagree, and tests inject time; an absolute PEXPIREAT would trust Redis's clock instead).
 * A client and path keep their keys between calls until one of their buckets starts anew.
 */
import { createHash } from 'node:crypto';
import { configurationError } from '../../core/errors.js';
import { PairCache } from '../../core/cache.js';
import { globEscape, scanKeyPages } from '../../core/redis-scan.js';
import type { RedisLike } from '../../core/store-clients.js';
import { isRecordDataError, StoreDataError, StoreFailedError } from '../../core/store-errors.js';
import { roundTripAnswered, type StoreCall } from '../../core/store-guard.js';
import { createRedisHistoryStore } from '../../history/redis.js';
import { redisConnection, type StoreConnection } from '../../core/store-connection.js';
import { scriptRunner } from './redis-script.js';
import { checkConsumeRequest, ruleKey, storedRule, storedRuleEntries, type ConsumeRequest, type ConsumeResult, type PeekRequest, type QuotaBucket, type QuotaStore } from './types.js';

export interface RedisQuotaStoreOptions {
  /**
   * An ioredis instance. The store never closes it. Best a connection of its own with
   * `enableOfflineQueue: false` (fail fast while Redis is away, so `onStoreError` applies at
   * once), `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false` (a call in flight
   * when the connection broke is not re-sent later, where it would be counted although the
   * guard already decided without it). With ioredis defaults the quota still works; such a
   * re-sent call only over-counts, it never over-admits.
   */
  client: RedisLike;
  /** Starts every key, inside the hash tag. Default `cp:q`. No braces. */
  prefix?: string;
  /**
   * A counter lives this long after its bucket's end (ms, default 5000), so an application
   * server whose clock runs a little behind still finds the count instead of starting over.
   */
  expiryGraceMs?: number;
}

export interface RedisQuotaStore extends QuotaStore {
  readonly kind: 'redis';
  readonly connection: StoreConnection;
  /** The keys of one client and path; for tests and operators. */
  keysFor(clientId: string, apiPath: string, buckets: readonly { period: string; start: number }[]): string[];
}

/**
 * KEYS: one counter per period. ARGV[1] cost; then per key i: ARGV[2i] limit (0 = unlimited),
 * ARGV[2i+1] TTL in ms (until the bucket's end, plus the grace).
 * Returns { admitted (1|0), used_1, ..., used_n } with the counts after the call.
 *
 * Charge first, then check, and take the charge back when a period has no room: INCRBY keeps the
 * key's TTL, so a counter gets its PEXPIRE once, when this call created it (the count equals the
 * cost). Redis's CPU is shared with the callers on a small machine, and every instruction of the
 * script counts: this costs about half of a MGET and a SET ... PX per period (measured with
 * INFO commandstats), and Redis runs the script atomically, so the count is never seen between
 * the charge and its undo.
 *
 * A counter Redis cannot add to (a key of another type, a string that is not an integer, a count
 * at its overflow) answers INCRBY with an error. Redis does not roll back a script that stops
 * on an error, so the INCRBY is a `redis.pcall`: on its error the charges already made are taken
 * back and the error itself is the reply, as Redis wrote it (`WRONGTYPE ...`, `ERR value is not
 * an integer or out of range`), so the client sees the same error as from a plain INCRBY and the
 * call leaves no count behind (docs/quota.md#damaged-data). On the healthy path pcall and the
 * type check cost about 40 ns per period, within the noise of INFO commandstats.
 */
export const CONSUME_SCRIPT = `
local cost = ARGV[1]
local created = tonumber(cost)
local reply = { 1 }
for i = 1, #KEYS do
  local used = redis.pcall('INCRBY', KEYS[i], cost)
  if type(used) == 'table' then
    for j = 1, i - 1 do redis.call('DECRBY', KEYS[j], cost) end
    return used
  end
  if used == created then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i + 1]) end
  local limit = tonumber(ARGV[2 * i])
  if limit > 0 and used > limit then reply[1] = 0 end
  reply[i + 1] = used
end
if reply[1] == 0 then
  for i = 1, #KEYS do reply[i + 1] = redis.call('DECRBY', KEYS[i], cost) end
end
return reply
`;

export const CONSUME_SCRIPT_SHA = createHash('sha1').update(CONSUME_SCRIPT).digest('hex');

/**
 * @example
 * import { Redis } from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false });
 * const service = createQuotaService({ store: createRedisQuotaStore({ client: redis }) });
 */
export function createRedisQuotaStore(options: RedisQuotaStoreOptions): RedisQuotaStore {
  const client = options?.client;
  if (!client || typeof client.evalsha !== 'function' || typeof client.eval !== 'function' || typeof client.mget !== 'function') {
    throw configurationError('invalid_option', 'client', 'must be an ioredis instance (evalsha, eval and mget)');
  }
  const prefix = options.prefix ?? 'cp:q';
  if (typeof prefix !== 'string' || prefix === '' || /[{}]/.test(prefix)) throw configurationError('invalid_option', 'prefix', 'must be a non-empty string without braces');

  const grace = options.expiryGraceMs ?? 5000;
  if (!Number.isSafeInteger(grace) || grace < 0) throw configurationError('invalid_option', 'expiryGraceMs', 'must be a non-negative integer');

  const keysFor = (clientId: string, apiPath: string, buckets: readonly { period: string; start: number }[]): string[] => {
    const tag = `{${prefix}:${encodeURIComponent(clientId)}:${apiPath}}`;
    return buckets.map((bucket) => `${tag}:${bucket.period}:${bucket.start}`);
  };

  // A client and path keep their keys until one of their buckets starts anew (the minute's, at
  // the most once a minute): remembered (10,000 pairs at most), the guarded call builds no key strings.
  type Remembered = { periods: string[]; starts: number[]; keys: string[] };
  const remembered = new PairCache<Remembered>({ max: 10_000 });
  const stillValid = (known: Remembered, buckets: readonly QuotaBucket[]): boolean => {
    if (known.keys.length !== buckets.length) return false;
    for (let i = 0; i < buckets.length; i++) if (buckets[i]!.start !== known.starts[i] || buckets[i]!.period !== known.periods[i]) return false;
    return true;
  };
  const keysOf = (clientId: string, apiPath: string, buckets: readonly QuotaBucket[]): string[] => {
    const known = remembered.get(clientId, apiPath);
    if (known && stillValid(known, buckets)) return known.keys;
    const keys = keysFor(clientId, apiPath, buckets);
    remembered.set(clientId, apiPath, { periods: buckets.map((b) => b.period), starts: buckets.map((b) => b.start), keys });
    return keys;
  };

  const run = scriptRunner(client, CONSUME_SCRIPT, CONSUME_SCRIPT_SHA);
  // One hash for every stored rule: few rules, read two fields at a time behind the rule cache.
  const rulesKey = `${prefix}:rules`;
  const parsed = (json: string | null | undefined) => (typeof json === 'string' ? storedRule(json) : undefined);
  /**
   * The rules key holding another type than a hash (written around the admin API): a data error,
   * no outage (docs/quota.md#damaged-data), naming the key and its repair, since Redis's own
   * WRONGTYPE names neither.
   */
  const rulesUnreadable = (error: unknown): never => {
    if (!isRecordDataError(error)) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new StoreDataError(
      'quota store (redis)',
      new Error(`${rulesKey} is not the hash of the stored rules (${detail}): rename it to keep what it holds, or delete it, then save the rules again through the admin API`, { cause: error }),
    );
  };

  /** Each page of the client's counter keys, to `visit`. */
  const clientKeyPages = (clientId: string, call: StoreCall | undefined, visit: (keys: string[]) => void | Promise<void>) =>
    scanKeyPages(client, `${globEscape(`{${prefix}:${encodeURIComponent(clientId)}:`)}*`, call, visit);
  /** The path inside a counter key's hash tag: `{prefix:client:path}:period:start`. */
  const pathOf = (key: string, clientId: string) => {
    const periodColon = key.lastIndexOf(':', key.lastIndexOf(':') - 1);
    return key.slice(`{${prefix}:${encodeURIComponent(clientId)}:`.length, periodColon - 1);
  };

  const history = createRedisHistoryStore({ client, prefix });
  return {
    kind: 'redis',
    connection: redisConnection(client),
    keysFor,
    ...(history ? { history } : {}),
    usage: {
      // Counters expire with their bucket (plus the grace): what SCAN finds is live or nearly.
      async paths(clientId, _now, call) {
        const paths = new Set<string>();
        await clientKeyPages(clientId, call, (keys) => {
          for (const key of keys) paths.add(pathOf(key, clientId));
        });
        return [...paths];
      },
      async reset(clientId, apiPath, call) {
        const paths = new Set<string>();
        // A page's keys at a time (at most about 1000 DELs in flight), so a client of a million
        // counters never has them all sent at once. One DEL per key: on a Cluster the keys of
        // different paths live in different slots.
        const del = (key: string) => (client as unknown as { del(key: string): Promise<number> }).del(key);
        await clientKeyPages(clientId, call, async (keys) => {
          const gone = keys.filter((key) => apiPath === undefined || pathOf(key, clientId) === apiPath);
          await Promise.all(gone.map(del));
          roundTripAnswered(call);
          for (const key of gone) paths.add(pathOf(key, clientId));
        });
        return paths.size;
      },
    },
    rules: {
      inProcess: false,
      async findRules(clientId, apiPath) {
        const [own, global] = (await client.hmget(rulesKey, ruleKey({ scope: 'client', clientId, apiPath }), ruleKey({ scope: 'global', apiPath })).catch(rulesUnreadable)).map(parsed);
        return { ...(own !== undefined ? { client: own } : {}), ...(global !== undefined ? { global } : {}) };
      },
      listRules: async () => storedRuleEntries(Object.entries(await client.hgetall(rulesKey).catch(rulesUnreadable))),
      saveRule: async (rule) => {
        await client.hset(rulesKey, ruleKey(rule), JSON.stringify(rule));
      },
      deleteRule: async (key) => (await client.hdel(rulesKey, ruleKey(key))) > 0,
    },
    async consume(request: ConsumeRequest): Promise<ConsumeResult> {
      checkConsumeRequest(request);
      const { buckets, cost, now } = request;
      const keys = keysOf(request.clientId, request.apiPath, buckets);
      const args: (string | number)[] = keys.slice();
      args.push(cost);
      for (const bucket of buckets) args.push(bucket.limit, Math.max(1, Math.ceil(bucket.end - now)) + grace);
      const reply = await run(keys.length, args);
      if (!Array.isArray(reply) || reply.length !== keys.length + 1) throw new StoreFailedError('quota store (redis)', 'unexpected reply from the consume script');
      const used: number[] = [];
      for (let i = 1; i < reply.length; i++) used.push(Number(reply[i]));
      return { admitted: Number(reply[0]) === 1, used };
    },
    async peek(request: PeekRequest): Promise<number[]> {
      if (request.buckets.length === 0) return [];
      const values = await client.mget(...keysFor(request.clientId, request.apiPath, request.buckets));
      return request.buckets.map((_, i) => Number(values[i] ?? 0));
    },
  };
}
