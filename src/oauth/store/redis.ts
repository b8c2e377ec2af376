/**
 * The OAuth store on Redis (standalone or Cluster), for several processes acting as one platform.
 *
 * Key layout (`p` = prefix, `g` = encodeURIComponent(grantId), `h` = encodeURIComponent(hash)):
 *
 *   p{g}:code:h     hash   record (JSON), expiresAt, consumed ('1' once exchanged)   PX to expiresAt
 *   p{g}:at:h       string the access token record (JSON)                            PX to expiresAt
 *   p{g}:rt:h       hash   record (JSON), expiresAt, consumed ('1' once rotated)     PX to expiresAt
 *   p{g}:tokens     set    the key names of the grant's access and refresh tokens    PX to the last
 *   p{g}:revoked    string revoked until (ms)                                        PX to until
 *   p client:id     string the client record (JSON)                                  no expiry
 *   p consent:sub:c string the approved scopes (JSON array)                          no expiry
 *
 * Every key of a grant carries the `{g}` hash tag, so they live in one Cluster slot and the Lua
 * scripts below may touch them together. Encoding the components means no id can forge a `{`, `}`
 * or `:` and collide with another key.
 *
 * TTLs are computed from the injected clock (`expiresAt - now()`, as PX), not PEXPIREAT: the
 * clock may differ from the Redis server's. The TTL only reclaims memory; readers compare
 * `expiresAt` with the injected clock themselves.
 */
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { checkClientRecord } from '../client-record.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ConsumedMarker,
  GrantBound,
  OAuthClientRecord,
  OAuthStore,
  RefreshTokenRecord,
  TokenRef,
} from './types.js';

/**
 * The few commands the store sends. An ioredis `Redis` or `Cluster` fits (the tests check both
 * types); so does any client offering these signatures. Typed structurally so ioredis stays an
 * optional peer dependency: nothing here imports it.
 */
export interface RedisLike {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export interface RedisOAuthStoreOptions {
  /** An ioredis `Redis` or `Cluster` instance (or anything `RedisLike`). The store never closes it. */
  client: RedisLike;
  /** Prepended to every key (default `cp:oauth:`). */
  prefix?: string;
  /** Time source for expiry (default `Date.now`). */
  now?: Clock;
}

interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Saves a code: KEYS[1] code key; ARGV record JSON, expiresAt, ttl. Replaces any previous
 * value so a re-saved code starts unconsumed, and sets data and TTL in one step.
 */
const SAVE_CODE = script(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'expiresAt', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

/**
 * Consumes a code or rotates a refresh token: KEYS[1] its hash key; ARGV[1] now (ms). Answers 1
 * for the first caller while the record is live, 0 otherwise. HSET keeps the key's TTL.
 */
const CONSUME = script(`
local f = redis.call('HMGET', KEYS[1], 'expiresAt', 'consumed')
if not f[1] or f[2] or tonumber(f[1]) <= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'consumed', '1')
return 1
`);

/**
 * Saves a grant's tokens unless it is revoked: KEYS revoked, tokens set, access key, [refresh
 * key]; ARGV now, access JSON, access ttl, [refresh JSON, refresh expiresAt, refresh ttl].
 * Adds the token keys (as the server sees them, any client-side key prefix included) to the
 * grant's set, whose TTL follows the longest-lived member. Names of expired members linger until
 * the set itself expires; they are at most about twice the grant's live keys, since every rotated
 * refresh token stays as a tombstone until its own expiry anyway. Answers 0 when refused.
 */
const SAVE_TOKENS = script(`
local revoked = redis.call('GET', KEYS[1])
if revoked and tonumber(revoked) > tonumber(ARGV[1]) then return 0 end
local keep = 0
local keepArg = nil
if tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
  redis.call('SADD', KEYS[2], KEYS[3])
  keep = tonumber(ARGV[3]); keepArg = ARGV[3]
end
if KEYS[4] and tonumber(ARGV[6]) > 0 then
  redis.call('DEL', KEYS[4])
  redis.call('HSET', KEYS[4], 'record', ARGV[4], 'expiresAt', ARGV[5])
  redis.call('PEXPIRE', KEYS[4], ARGV[6])
  redis.call('SADD', KEYS[2], KEYS[4])
  if tonumber(ARGV[6]) > keep then keep = tonumber(ARGV[6]); keepArg = ARGV[6] end
end
if keepArg and redis.call('PTTL', KEYS[2]) < keep then redis.call('PEXPIRE', KEYS[2], keepArg) end
return 1
`);

/**
 * Revokes a grant: KEYS tokens set, revoked; ARGV until, ttl. Deletes every token key listed in
 * the set (same hash tag, hence same Cluster slot as the declared keys) and records the later of
 * the old and new deadlines.
 */
const REVOKE = script(`
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do redis.call('DEL', key) end
redis.call('DEL', KEYS[1])
local current = redis.call('GET', KEYS[2])
if tonumber(ARGV[2]) > 0 and (not current or tonumber(current) < tonumber(ARGV[1])) then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
end
return 1
`);

/**
 * @example
 * import { Redis } from 'ioredis';
 * const store = createRedisOAuthStore({ client: new Redis(process.env.REDIS_URL!) });
 */
export function createRedisOAuthStore(options: RedisOAuthStoreOptions): OAuthStore {
  const { client } = options;
  const prefix = options.prefix ?? 'cp:oauth:';
  const now = options.now ?? systemClock;
  if (!client || typeof client.get !== 'function' || typeof client.evalsha !== 'function') {
    throw configurationError('invalid_option', 'client', 'must be an ioredis Redis or Cluster instance');
  }
  if (typeof prefix !== 'string') throw configurationError('invalid_option', 'prefix', 'must be a string');

  const grantKey = (grantId: string) => {
    if (typeof grantId !== 'string' || grantId === '') throw configurationError('invalid_argument', 'grantId', 'must be a non-empty string');
    return `${prefix}{${encodeURIComponent(grantId)}}`;
  };
  const keys = {
    code: (ref: TokenRef) => `${grantKey(ref.grantId)}:code:${encodeURIComponent(ref.hash)}`,
    access: (ref: TokenRef) => `${grantKey(ref.grantId)}:at:${encodeURIComponent(ref.hash)}`,
    refresh: (ref: TokenRef) => `${grantKey(ref.grantId)}:rt:${encodeURIComponent(ref.hash)}`,
    tokens: (grantId: string) => `${grantKey(grantId)}:tokens`,
    revoked: (grantId: string) => `${grantKey(grantId)}:revoked`,
    client: (id: string) => `${prefix}client:${encodeURIComponent(id)}`,
    consent: (sub: string, clientId: string) =>
      `${prefix}consent:${encodeURIComponent(sub)}:${encodeURIComponent(clientId)}`,
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

  /** Reads a code or refresh token hash: the live record with its consumed flag, or undefined. */
  async function findMarked<T extends GrantBound>(key: string): Promise<(T & ConsumedMarker) | undefined> {
    const [json, consumed] = await client.hmget(key, 'record', 'consumed');
    if (!json) return undefined;
    const record = JSON.parse(json) as T;
    return record.expiresAt > now() ? { ...record, consumed: consumed === '1' } : undefined;
  }

  return {
    async getClient(clientId) {
      const json = await client.get(keys.client(clientId));
      return json === null ? undefined : (JSON.parse(json) as OAuthClientRecord);
    },

    async saveClient(candidate) {
      const record = checkClientRecord(candidate);
      await client.set(keys.client(record.id), JSON.stringify(record));
    },

    async saveCode(code) {
      const key = keys.code(code.ref);
      const left = ttl(code.expiresAt);
      // Redis refuses a PX of 0 or less; an expired code is as good as absent.
      if (left <= 0) return;
      await run(SAVE_CODE, [key], [JSON.stringify(code), code.expiresAt, left]);
    },

    async findCode(ref) {
      return findMarked<AuthorizationCodeRecord>(keys.code(ref));
    },

    async consumeCode(ref) {
      return (await run(CONSUME, [keys.code(ref)], [now()])) === 1;
    },

    async saveTokens({ access, refresh }) {
      if (refresh && refresh.ref.grantId !== access.ref.grantId) {
        throw configurationError('invalid_argument', 'tokens.refresh.ref.grantId', 'must be the grant of the access token');
      }
      const grantId = access.ref.grantId;
      const keyList = [keys.revoked(grantId), keys.tokens(grantId), keys.access(access.ref)];
      const args: (string | number)[] = [now(), JSON.stringify(access), ttl(access.expiresAt)];
      if (refresh) {
        keyList.push(keys.refresh(refresh.ref));
        args.push(JSON.stringify(refresh), refresh.expiresAt, ttl(refresh.expiresAt));
      }
      return (await run(SAVE_TOKENS, keyList, args)) === 1;
    },

    async findAccessToken(ref) {
      // One GET: revocation deletes the key, so nothing else needs checking.
      const json = await client.get(keys.access(ref));
      if (json === null) return undefined;
      const record = JSON.parse(json) as AccessTokenRecord;
      return record.expiresAt > now() ? record : undefined;
    },

    async findRefreshToken(ref) {
      return findMarked<RefreshTokenRecord>(keys.refresh(ref));
    },

    async rotateRefreshToken(ref) {
      return (await run(CONSUME, [keys.refresh(ref)], [now()])) === 1;
    },

    async revokeGrant(grantId, until) {
      await run(REVOKE, [keys.tokens(grantId), keys.revoked(grantId)], [until, ttl(until)]);
    },

    async getConsent(sub, clientId) {
      const json = await client.get(keys.consent(sub, clientId));
      return json === null ? undefined : (JSON.parse(json) as string[]);
    },

    async saveConsent(sub, clientId, scopes) {
      await client.set(keys.consent(sub, clientId), JSON.stringify(scopes));
    },
  };
}
