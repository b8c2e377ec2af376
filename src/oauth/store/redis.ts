/**
 * The OAuth store on Redis (standalone or Cluster), for several processes acting as one platform.
 *
 * Key layout (`p` = prefix, `g` = encodeURIComponent(grantId), `s`/`c` = the encoded sub/client id):
 *
 *   p{g}:grant      hash  the grant record (fields below)                 PX to its last part's expiry
 *   p grants:s:c    zset  the grant ids of a (sub, client) pair           no expiry (pruned, see index)
 *   p clients       hash   client id -> the client record (JSON)          no expiry
 *   p consent:s:c   string the approved scopes (JSON array)               no expiry
 *   p once:id       string a used one-time id's expiry (consent transaction) PX to its expiry
 *   p failures:n:{k} set   a brute-force window: the ids of the attempts counted, n client-auth or login,
 *                          k the counted key's hash (failure-windows.ts)             PX the window
 *   p given-back:n:{k} zset the ids given back there (counted or not), each scored by
 *                          when it is forgotten: a window after its own give-back (ms)  PX the window, from the last
 *   p known-callers:n:{c} zset the callers that proved client c's secret (hashes), each scored by when
 *                          its mark ends; the most recent ones only (known-callers.ts)  PX a mark's life, from the last
 *
 * The grant record's fields, bounded whatever the number of refreshes:
 *
 *   code, codeExp, record, consumed   the code's hash and expiry (ms), the code record (JSON), '1' once exchanged
 *   gen                               0 until the first tokens, then one more per refresh
 *   rt, rtExp, rtAt, pending          the current refresh token's hash, expiry, when it was installed (ms),
 *                                     and '1' while its rotation is pending (types.ts)
 *   prt, prtExp, prtAt                the previous generation's, and when the refresh that rotated it out was asked for
 *   older                             earlier generations before it, [[hash, expiry], ...] JSON, newest first
 *                                     (at most EARLIER_REFRESH_TOKENS - 1, unexpired; withEarlier)
 *   at / pat                          the hash of the current / previous access token
 *   at:<hash>                         those two access tokens ({scope, expiresAt} JSON); a refresh deletes the older
 *
 * A grant is one key under its `{g}` hash tag, so every script (redis-scripts.ts) touches one key and works
 * on Redis Cluster. Encoding the components means no id can forge a `{`, `}` or `:` and collide
 * with another key.
 *
 * TTLs are computed from the injected clock (`expiresAt - now()`, as PX), not PEXPIREAT: the
 * clock may differ from the Redis server's. The TTL only reclaims memory; readers compare
 * `expiresAt` with the injected clock themselves.
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { checkClientRecord, storedClientRecord } from '../client-record.js';
import { clientPage } from './client-page.js';
import type { RedisLike } from '../../core/store-clients.js';
import { redisConnection, type StoreConnection } from '../../core/store-connection.js';
import { globEscape, scanKeys } from '../../core/redis-scan.js';
import { roundTripAnswered } from '../../core/store-guard.js';
import { storedObject } from '../../core/stored-json.js';
import {
  accessView,
  checkGrantId,
  clientGrantRecord,
  EARLIER_REFRESH_TOKENS,
  grantIdOf,
  lateWriteMsOf,
  refreshView,
  storedAccess,
  type EarlierToken,
  type StoredAccessToken,
  type StoredGrant,
} from './grant-record.js';
import type { AuthorizationCodeRecord, NewTokens, OAuthStore, TokenRef } from './types.js';
import {
  CONFIRM,
  CONSUME,
  DELETE,
  INDEX_ADD,
  INDEX_CHECKED,
  INDEX_MEMBERS,
  INSTALL,
  REVOKE_ACCESS,
  SAVE_CLIENT_TOKEN,
  SAVE_CODE,
  USE_ONCE,
  type Script,
} from './redis-scripts.js';

export interface RedisOAuthStoreOptions {
  /** An ioredis `Redis` or `Cluster` instance (or anything `RedisLike`). The store never closes it. */
  client: RedisLike;
  /** Prepended to every key (default `cp:oauth:`). */
  prefix?: string;
  /** Time source for expiry (default `Date.now`). */
  now?: Clock;
}

/** What the brute-force limits need to count on this store (failure-windows.ts). */
export interface RedisRateLimitStore {
  readonly kind: 'redis';
  /** The store's key prefix: the windows live under `<prefix>failures:`. */
  readonly keyPrefix: string;
  /** Runs one of the store's scripts, as the store runs its own (EVALSHA, then EVAL on NOSCRIPT). */
  run(lua: Script, keys: string[], args: (string | number)[]): Promise<unknown>;
  /** The store's clock: when an id given back is forgotten, as its grants expire by it. */
  now(): number;
}

export interface RedisOAuthStore extends OAuthStore {
  /** Names the store in the log, the metrics and errors: `OAuth store (redis)`. */
  readonly kind: 'redis';
  /** The client as `ready()` waits for it to connect (docs/deployment.md#start). */
  readonly connection: StoreConnection;
  /** Lets the client-authentication limit and `createLoginThrottle({ store })` count on this Redis. */
  readonly rateLimitStore: RedisRateLimitStore;
}

/**
 * @example
 * import { Redis } from 'ioredis';
 * const store = createRedisOAuthStore({ client: new Redis(process.env.REDIS_URL!) });
 */
export function createRedisOAuthStore(options: RedisOAuthStoreOptions): RedisOAuthStore {
  const { client } = options;
  const prefix = options.prefix ?? 'cp:oauth:';
  const now = options.now ?? systemClock;
  if (!client || typeof client.get !== 'function' || typeof client.evalsha !== 'function') {
    throw configurationError('invalid_option', 'client', 'must be an ioredis Redis or Cluster instance');
  }
  if (typeof prefix !== 'string') throw configurationError('invalid_option', 'prefix', 'must be a string');

  const pair = (sub: string, clientId: string) => `${encodeURIComponent(sub)}:${encodeURIComponent(clientId)}`;
  const keys = {
    grant: (grantId: string) => {
      checkGrantId(grantId);
      return `${prefix}{${encodeURIComponent(grantId)}}:grant`;
    },
    grants: (sub: string, clientId: string) => `${prefix}grants:${pair(sub, clientId)}`,
    // One hash of every client: few, read by id, listed by the admin API.
    clients: `${prefix}clients`,
    consent: (sub: string, clientId: string) => `${prefix}consent:${pair(sub, clientId)}`,
    once: (id: string) => `${prefix}once:${encodeURIComponent(id)}`,
  };

  /**
   * EVALSHA first; on NOSCRIPT (a restarted server, a Cluster node that never saw the script)
   * EVAL once, which also caches the script there for the next EVALSHA.
   */
  async function run(lua: Script, keyList: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(lua.sha, keyList.length, ...keyList, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(lua.source, keyList.length, ...keyList, ...args);
    }
  }

  const ttl = (expiresAt: number) => Math.ceil(expiresAt - now());

  /** One script call installs the first issuance, or a refresh presenting a refresh token. */
  function install(tokens: NewTokens, presented?: TokenRef, retryGraceMs = 0, lateWriteMs?: number): Promise<unknown> {
    const { access, refresh } = tokens;
    const grantId = grantIdOf(tokens, presented);
    const stored = storedAccess(access);
    const newest = Math.max(access.expiresAt, refresh?.expiresAt ?? 0);
    return run(INSTALL, [keys.grant(grantId)], [
      now(), presented?.hash ?? '', access.ref.hash, JSON.stringify(stored),
      refresh?.ref.hash ?? '', refresh?.expiresAt ?? 0, ttl(newest), retryGraceMs, EARLIER_REFRESH_TOKENS - 1, lateWriteMsOf(lateWriteMs),
    ]);
  }

  /**
   * Keeps a pair's index small without any timer: each new grant checks the two members checked
   * longest ago and drops those whose grant is gone, so the index stays within about twice the
   * pair's live grants. Indexing comes before the record exists, so revokeUserGrants never misses
   * a grant it should end.
   */
  async function index(code: AuthorizationCodeRecord): Promise<() => Promise<void>> {
    const key = keys.grants(code.user.sub, code.clientId);
    const oldest = (await run(INDEX_ADD, [key], [code.ref.grantId])) as string[];
    return async () => {
      const checks = await Promise.all(
        oldest.filter((id) => id !== code.ref.grantId).map(async (id) => [id, (await client.hmget(keys.grant(id), 'code'))[0] ? '1' : '0']),
      );
      if (checks.length > 0) await run(INDEX_CHECKED, [key], checks.flat());
    };
  }

  /**
   * The key and PX for a grant record about to be written anew; nothing when the record is already
   * expired, which is as good as absent: whatever the key held is deleted, and nothing is written or indexed.
   */
  async function replacedGrant(grantId: string, expiresAt: number): Promise<{ key: string; left: number } | undefined> {
    const key = keys.grant(grantId);
    const left = ttl(expiresAt);
    if (left > 0) return { key, left };
    await run(DELETE, [key], []);
    return undefined;
  }

  async function readGrant(grantId: string, ...fields: string[]): Promise<(string | null)[]> {
    return client.hmget(keys.grant(grantId), ...fields);
  }

  return {
    kind: 'redis',
    connection: redisConnection(client),
    rateLimitStore: { kind: 'redis', keyPrefix: prefix, run, now },

    async getClient(clientId) {
      const [json] = await client.hmget(keys.clients, clientId);
      return json === null || json === undefined ? undefined : storedClientRecord(json, clientId);
    },

    async saveClient(candidate) {
      const record = checkClientRecord(candidate);
      await client.hset(keys.clients, record.id, JSON.stringify(record));
    },

    // One hash holds every client (applications, not users: a few thousand at most), read whole.
    async listClients(page) {
      const records = Object.entries(await client.hgetall(keys.clients)).map(([id, json]) => storedClientRecord(json, id));
      return clientPage(records.filter((record) => record !== undefined), page);
    },

    async deleteClient(clientId, call) {
      // The user grants of every (sub, client) pair index, and the consents: found by SCAN, since
      // nothing else is keyed by client. A client's own grants (client_credentials) are not
      // indexed; they die with their one access token. Every round trip is told to `call`. The
      // record last, so that a deletion that fails part way leaves the client to delete again.
      const step = <T>(answer: Promise<T>) => answer.then((value) => (roundTripAnswered(call), value));
      const ofClient = `:${globEscape(encodeURIComponent(clientId))}`;
      for (const index of await scanKeys(client, `${globEscape(`${prefix}grants:`)}*${ofClient}`, call)) {
        const grantIds = (await step(run(INDEX_MEMBERS, [index], []))) as string[];
        await Promise.all(grantIds.map((grantId) => step(run(DELETE, [keys.grant(grantId)], []))));
        await step(run(DELETE, [index], []));
      }
      for (const consent of await scanKeys(client, `${globEscape(`${prefix}consent:`)}*${ofClient}`, call)) await step(run(DELETE, [consent], []));
      return (await client.hdel(keys.clients, clientId)) > 0;
    },

    async saveCode(code) {
      const grant = await replacedGrant(code.ref.grantId, code.expiresAt);
      if (!grant) return;
      const prune = await index(code);
      await run(SAVE_CODE, [grant.key], [code.ref.hash, code.expiresAt, JSON.stringify(code), grant.left]);
      // The code is saved; a failed prune only leaves it for a later grant of the pair.
      await prune().catch(() => undefined);
    },

    async findCode(ref) {
      const [hash, json, consumed, refreshExp, access] = await readGrant(ref.grantId, 'code', 'record', 'consumed', 'rtExp', 'at');
      if (!hash || hash !== ref.hash || !json) return undefined;
      const record = storedObject<AuthorizationCodeRecord>(json);
      if (record.expiresAt > now()) return { ...record, consumed: consumed === '1' };
      // An exchanged code stays known while a token of its grant lives (findCode in types.ts);
      // the key's TTL follows the same parts but not the injected clock.
      if (consumed !== '1') return undefined;
      if (Number(refreshExp ?? 0) > now()) return { ...record, consumed: true };
      const [stored] = access ? await readGrant(ref.grantId, `at:${access}`) : [null];
      return stored && storedObject<StoredAccessToken>(stored).expiresAt > now() ? { ...record, consumed: true } : undefined;
    },

    async consumeCode(ref) {
      return (await run(CONSUME, [keys.grant(ref.grantId)], [ref.hash, now()])) === 1;
    },

    async issueTokens(tokens) {
      return (await install(tokens)) === 1;
    },

    async findAccessToken(ref) {
      // One HMGET: retiring or revoking a token deletes its field, so nothing else needs checking.
      const [json, token] = await readGrant(ref.grantId, 'record', `at:${ref.hash}`);
      if (!json || !token) return undefined;
      const stored = storedObject<StoredAccessToken>(token);
      return stored.expiresAt > now() ? accessView(storedObject<StoredGrant>(json), ref, stored) : undefined;
    },

    async findRefreshToken(ref) {
      const [json, rt, rtExp, prt, prtExp, prtAt, older] = await readGrant(ref.grantId, 'record', 'rt', 'rtExp', 'prt', 'prtExp', 'prtAt', 'older');
      if (!json) return undefined;
      const olderExpiry = () => (JSON.parse(older ?? '[]') as EarlierToken[]).find(([hash]) => hash === ref.hash)?.[1];
      const [expiresAt, earlier] =
        rt === ref.hash ? [Number(rtExp), undefined]
        : prt === ref.hash ? [Number(prtExp), { rotatedAt: Number(prtAt ?? 0) }]
        : [olderExpiry() ?? 0, {}];
      if (!(expiresAt > now())) return undefined;
      return refreshView(storedObject<AuthorizationCodeRecord>(json), ref, expiresAt, earlier);
    },

    async rotateRefreshToken(presented, next, retryGraceMs = 0, lateWriteMs) {
      const outcome = await install(next, presented, retryGraceMs, lateWriteMs);
      return outcome === 1 ? 'rotated' : outcome === 2 ? 'reused' : 'invalid';
    },

    async confirmRotation(successor) {
      await run(CONFIRM, [keys.grant(successor.grantId)], [successor.hash]);
    },

    async issueClientToken(token) {
      const grant = await replacedGrant(token.ref.grantId, token.expiresAt);
      if (!grant) return;
      await run(SAVE_CLIENT_TOKEN, [grant.key], [JSON.stringify(clientGrantRecord(token)), token.ref.hash, JSON.stringify(storedAccess(token)), grant.left]);
    },

    async revokeAccessToken(ref) {
      await run(REVOKE_ACCESS, [keys.grant(ref.grantId)], [ref.hash]);
    },

    async revokeGrant(grantId) {
      // An expired grant's key is already gone (its TTL): DEL counts a live one.
      return (await run(DELETE, [keys.grant(grantId)], [])) === 1;
    },

    async revokeUserGrants(sub, clientId) {
      const key = keys.grants(sub, clientId);
      const grantIds = (await run(INDEX_MEMBERS, [key], [])) as string[];
      // An expired grant's key is already gone (its TTL), so DEL counts the live ones.
      const deleted = await Promise.all(grantIds.map((grantId) => run(DELETE, [keys.grant(grantId)], [])));
      if (grantIds.length > 0) await run(INDEX_CHECKED, [key], grantIds.flatMap((grantId) => [grantId, '0']));
      await run(DELETE, [keys.consent(sub, clientId)], []);
      return deleted.reduce<number>((sum, count) => sum + Number(count), 0);
    },

    async getConsent(sub, clientId) {
      const json = await client.get(keys.consent(sub, clientId));
      return json === null ? undefined : (JSON.parse(json) as string[]);
    },

    async saveConsent(sub, clientId, scopes) {
      await client.set(keys.consent(sub, clientId), JSON.stringify(scopes));
    },

    async useOnce(id, expiresAt) {
      const at = now();
      return (await run(USE_ONCE, [keys.once(id)], [expiresAt, at, Math.max(1, Math.ceil(expiresAt - at))])) === 1;
    },
  };
}
