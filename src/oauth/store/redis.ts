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
 *   p limits:n:k    string a brute-force count, n client-auth or login (rate-limiter-flexible) EX the window
 *
 * The grant record's fields, bounded whatever the number of refreshes:
 *
 *   code, codeExp, record, consumed   the code's hash and expiry (ms), the code record (JSON), '1' once exchanged
 *   gen                               0 until the first tokens, then one more per refresh
 *   rt, rtExp, rtAt                   the current refresh token's hash, expiry and when it was installed (ms)
 *   prt, prtExp, prtAt                the previous generation's, and when the refresh that rotated it out was asked for
 *   at / pat                          the hash of the current / previous access token
 *   at:<hash>                         those two access tokens ({scope, expiresAt} JSON); a refresh deletes the older
 *
 * A grant is one key under its `{g}` hash tag, so every script below touches one key and works
 * on Redis Cluster. Encoding the components means no id can forge a `{`, `}` or `:` and collide
 * with another key.
 *
 * TTLs are computed from the injected clock (`expiresAt - now()`, as PX), not PEXPIREAT: the
 * clock may differ from the Redis server's. The TTL only reclaims memory; readers compare
 * `expiresAt` with the injected clock themselves.
 */
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { checkClientRecord } from '../client-record.js';
import { clientPage } from './client-page.js';
import type { RedisLike } from '../../core/store-clients.js';
import { globEscape, scanKeys } from '../../core/redis-scan.js';
import { accessView, checkGrantId, clientGrantRecord, grantIdOf, refreshView, storedAccess, type StoredAccessToken, type StoredGrant } from './grant-record.js';
import type { AuthorizationCodeRecord, NewTokens, OAuthClientRecord, OAuthStore, TokenRef } from './types.js';

export interface RedisOAuthStoreOptions {
  /** An ioredis `Redis` or `Cluster` instance (or anything `RedisLike`). The store never closes it. */
  client: RedisLike;
  /** Prepended to every key (default `cp:oauth:`). */
  prefix?: string;
  /** Time source for expiry (default `Date.now`). */
  now?: Clock;
}

/** What the brute-force limits need to count on this store (rate-limiter-flexible's RateLimiterRedis). */
export interface RedisRateLimitStore {
  readonly kind: 'redis';
  readonly client: RedisLike;
  /** The store's key prefix: the counters live under `<prefix>limits:`. */
  readonly keyPrefix: string;
}

export interface RedisOAuthStore extends OAuthStore {
  /** Lets the client-authentication limit and `createLoginThrottle({ store })` count on this Redis. */
  readonly rateLimitStore: RedisRateLimitStore;
}

interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Creates a grant's record: KEYS[1] grant; ARGV code hash, code expiresAt, code record JSON, ttl. Replaces any previous one. */
const SAVE_CODE = script(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'code', ARGV[1], 'codeExp', ARGV[2], 'record', ARGV[3], 'gen', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`);

/**
 * Marks a code exchanged: KEYS[1] grant; ARGV code hash, now (ms). Answers 1 for the first caller
 * while the code is live, 0 otherwise. HSET keeps the key's TTL.
 */
const CONSUME = script(`
local f = redis.call('HMGET', KEYS[1], 'code', 'codeExp', 'consumed')
if f[1] ~= ARGV[1] or f[3] or tonumber(f[2]) <= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'consumed', '1')
return 1
`);

/**
 * Installs a new generation of tokens: KEYS[1] grant; ARGV now, the refresh token presented (''
 * for the first issuance), access hash, access JSON, refresh hash ('' for none), refresh
 * expiresAt, ttl of the newest part, the retry grace (ms). The first issuance needs an exchanged
 * code and generation 0; a refresh needs the current, unexpired refresh token, or the previous
 * one within the retry grace (then the previous token and prtAt stay; see previousTokenOutcome).
 * Every check comes before the first write, so a refused call changes nothing. Answers 1 when
 * installed, 2 when the token presented is the previous generation's (a reuse), 0 otherwise.
 */
const INSTALL = script(`
local f = redis.call('HMGET', KEYS[1], 'consumed', 'gen', 'rt', 'rtExp', 'prt', 'prtExp', 'at', 'pat', 'prtAt', 'rtAt')
local now = tonumber(ARGV[1])
local retry = false
if ARGV[2] == '' then
  if f[1] ~= '1' or f[2] ~= '0' then return 0 end
elseif f[3] ~= ARGV[2] or tonumber(f[4]) <= now then
  if f[5] ~= ARGV[2] or tonumber(f[6]) <= now then return 0 end
  local grace = tonumber(ARGV[8])
  if grace <= 0 then return 2 end
  if now < tonumber(f[10] or '0') then return 0 end
  if now - tonumber(f[9] or '0') > grace then return 2 end
  retry = true
end
if f[8] then redis.call('HDEL', KEYS[1], 'at:' .. f[8]) end
redis.call('HSET', KEYS[1], 'gen', tonumber(f[2]) + 1, 'pat', f[7] or '', 'at', ARGV[3], 'at:' .. ARGV[3], ARGV[4])
if ARGV[5] ~= '' then
  if not retry then redis.call('HSET', KEYS[1], 'prt', f[3] or '', 'prtExp', f[4] or '0', 'prtAt', ARGV[1]) end
  redis.call('HSET', KEYS[1], 'rt', ARGV[5], 'rtExp', ARGV[6], 'rtAt', ARGV[1])
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[7]) then redis.call('PEXPIRE', KEYS[1], ARGV[7]) end
return 1
`);

/**
 * Creates a client's own grant holding one access token: KEYS[1] grant; ARGV grant record JSON,
 * access hash, access JSON, ttl. No code (an empty hash matches none), no refresh token, no index.
 */
const SAVE_CLIENT_TOKEN = script(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'code', '', 'codeExp', '0', 'record', ARGV[1], 'consumed', '1', 'gen', '1', 'at', ARGV[2], 'at:' .. ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`);

/** Ends one access token: KEYS[1] grant; ARGV[1] its hash. */
const REVOKE_ACCESS = script(`return redis.call('HDEL', KEYS[1], 'at:' .. ARGV[1])`);

/** Deletes a grant's record (revocation) or a consent: KEYS[1]. */
const DELETE = script(`return redis.call('DEL', KEYS[1])`);

/**
 * Indexes a new grant of a pair: KEYS[1] the pair's index; ARGV[1] grant id. Scores count up, so
 * the lowest are the members checked longest ago; answers two of them, for saveCode to prune.
 */
const INDEX_ADD = script(`
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('ZADD', KEYS[1], (tonumber(top[2]) or 0) + 1, ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, 1)
`);

/** Records index checks: KEYS[1] index; ARGV pairs of grant id and '1' (alive: moves to the end) or '0' (gone: removed). */
const INDEX_CHECKED = script(`
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == '1' then
    local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    redis.call('ZADD', KEYS[1], 'XX', (tonumber(top[2]) or 0) + 1, ARGV[i])
  else
    redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return 1
`);

/**
 * Marks a one-time id used: KEYS[1]; ARGV expiresAt, now (injected clock, ms), ttl. Answers 1 for
 * the first use, 0 while an earlier use has not expired.
 */
const USE_ONCE = script(`
local expires = tonumber(redis.call('GET', KEYS[1]))
if expires and expires > tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`);

/** The grant ids of a pair: KEYS[1] index. */
const INDEX_MEMBERS = script(`return redis.call('ZRANGE', KEYS[1], 0, -1)`);

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
  function install(tokens: NewTokens, presented?: TokenRef, retryGraceMs = 0): Promise<unknown> {
    const { access, refresh } = tokens;
    const grantId = grantIdOf(tokens, presented);
    const stored = storedAccess(access);
    const newest = Math.max(access.expiresAt, refresh?.expiresAt ?? 0);
    return run(INSTALL, [keys.grant(grantId)], [
      now(), presented?.hash ?? '', access.ref.hash, JSON.stringify(stored),
      refresh?.ref.hash ?? '', refresh?.expiresAt ?? 0, ttl(newest), retryGraceMs,
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

  async function readGrant(grantId: string, ...fields: string[]): Promise<(string | null)[]> {
    return client.hmget(keys.grant(grantId), ...fields);
  }

  return {
    rateLimitStore: { kind: 'redis', client, keyPrefix: prefix },

    async getClient(clientId) {
      const [json] = await client.hmget(keys.clients, clientId);
      return json === null || json === undefined ? undefined : (JSON.parse(json) as OAuthClientRecord);
    },

    async saveClient(candidate) {
      const record = checkClientRecord(candidate);
      await client.hset(keys.clients, record.id, JSON.stringify(record));
    },

    // One hash holds every client (applications, not users: a few thousand at most), read whole.
    async listClients(page) {
      return clientPage(Object.values(await client.hgetall(keys.clients)).map((json) => JSON.parse(json) as OAuthClientRecord), page);
    },

    async deleteClient(clientId) {
      const deleted = (await client.hdel(keys.clients, clientId)) > 0;
      // The user grants of every (sub, client) pair index, and the consents: found by SCAN, since
      // nothing else is keyed by client. A client's own grants (client_credentials) are not
      // indexed; they die with their one access token.
      const ofClient = `:${globEscape(encodeURIComponent(clientId))}`;
      for (const index of await scanKeys(client, `${globEscape(`${prefix}grants:`)}*${ofClient}`)) {
        const grantIds = (await run(INDEX_MEMBERS, [index], [])) as string[];
        await Promise.all(grantIds.map((grantId) => run(DELETE, [keys.grant(grantId)], [])));
        await run(DELETE, [index], []);
      }
      for (const consent of await scanKeys(client, `${globEscape(`${prefix}consent:`)}*${ofClient}`)) await run(DELETE, [consent], []);
      return deleted;
    },

    async saveCode(code) {
      const key = keys.grant(code.ref.grantId);
      const left = ttl(code.expiresAt);
      // Redis refuses a PX of 0 or less; an expired code is as good as absent.
      if (left <= 0) {
        await run(DELETE, [key], []);
        return;
      }
      const prune = await index(code);
      await run(SAVE_CODE, [key], [code.ref.hash, code.expiresAt, JSON.stringify(code), left]);
      // The code is saved; a failed prune only leaves it for a later grant of the pair.
      await prune().catch(() => undefined);
    },

    async findCode(ref) {
      const [hash, json, consumed] = await readGrant(ref.grantId, 'code', 'record', 'consumed');
      if (hash !== ref.hash || !json) return undefined;
      const record = JSON.parse(json) as AuthorizationCodeRecord;
      return record.expiresAt > now() ? { ...record, consumed: consumed === '1' } : undefined;
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
      const stored = JSON.parse(token) as StoredAccessToken;
      return stored.expiresAt > now() ? accessView(JSON.parse(json) as StoredGrant, ref, stored) : undefined;
    },

    async findRefreshToken(ref) {
      const [json, rt, rtExp, prt, prtExp, prtAt] = await readGrant(ref.grantId, 'record', 'rt', 'rtExp', 'prt', 'prtExp', 'prtAt');
      if (!json) return undefined;
      const current = rt === ref.hash;
      const expiresAt = Number(current ? rtExp : prt === ref.hash ? prtExp : 0);
      if (!(expiresAt > now())) return undefined;
      return refreshView(JSON.parse(json) as AuthorizationCodeRecord, ref, expiresAt, current ? undefined : Number(prtAt ?? 0));
    },

    async rotateRefreshToken(presented, next, retryGraceMs = 0) {
      const outcome = await install(next, presented, retryGraceMs);
      return outcome === 1 ? 'rotated' : outcome === 2 ? 'reused' : 'invalid';
    },

    async issueClientToken(token) {
      const key = keys.grant(token.ref.grantId);
      const left = ttl(token.expiresAt);
      if (left <= 0) {
        await run(DELETE, [key], []);
        return;
      }
      await run(SAVE_CLIENT_TOKEN, [key], [JSON.stringify(clientGrantRecord(token)), token.ref.hash, JSON.stringify(storedAccess(token)), left]);
    },

    async revokeAccessToken(ref) {
      await run(REVOKE_ACCESS, [keys.grant(ref.grantId)], [ref.hash]);
    },

    async revokeGrant(grantId) {
      await run(DELETE, [keys.grant(grantId)], []);
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
