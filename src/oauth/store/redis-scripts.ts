/**
 * The Lua scripts of the Redis OAuth store (redis.ts describes the keys and fields they touch).
 * Each touches one key, or two under one hash tag (a brute-force window's), so each works on
 * Redis Cluster.
 */
import { createHash } from 'node:crypto';

export interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Creates a grant's record: KEYS[1] grant; ARGV code hash, code expiresAt, code record JSON, ttl. Replaces any previous one. */
export const SAVE_CODE = script(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'code', ARGV[1], 'codeExp', ARGV[2], 'record', ARGV[3], 'gen', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`);

/**
 * Marks a code exchanged: KEYS[1] grant; ARGV code hash, now (ms). Answers 1 for the first caller
 * while the code is live, 0 otherwise. HSET keeps the key's TTL.
 */
export const CONSUME = script(`
local f = redis.call('HMGET', KEYS[1], 'code', 'codeExp', 'consumed')
if f[1] ~= ARGV[1] or f[3] or tonumber(f[2]) <= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'consumed', '1')
return 1
`);

/**
 * Installs a new generation of tokens: KEYS[1] grant; ARGV now, the refresh token presented (''
 * for the first issuance), access hash, access JSON, refresh hash ('' for none), refresh
 * expiresAt, ttl of the newest part, the retry grace (ms), how many older tokens to keep, how
 * much earlier than the current generation a late write was asked for (ms). The first issuance
 * needs an exchanged code and generation 0; a refresh the current unexpired refresh token (a
 * rotation), or, unless it is a late write, the previous one while the rotation is pending or
 * within the grace (a retry); see rotateRefreshToken in types.ts and earlierTokenOutcome. Every
 * check comes before the first write, so a refused call changes nothing. Answers 1 when
 * installed, 2 when the token presented is an earlier generation's (a reuse), 0 otherwise.
 */
export const INSTALL = script(`
local f = redis.call('HMGET', KEYS[1], 'consumed', 'gen', 'rt', 'rtExp', 'prt', 'prtExp', 'at', 'pat', 'prtAt', 'rtAt', 'pending', 'older')
local now = tonumber(ARGV[1])
local older = cjson.decode(f[12] or '[]')
local step = 'rotate'
if ARGV[2] == '' then
  if f[1] ~= '1' or f[2] ~= '0' then return 0 end
  step = 'first'
elseif f[3] ~= ARGV[2] or tonumber(f[4]) <= now then
  if tonumber(f[10] or '0') - now >= tonumber(ARGV[10]) then return 0 end
  if f[5] == ARGV[2] and tonumber(f[6]) > now then
    local grace = tonumber(ARGV[8])
    if f[11] ~= '1' and (grace <= 0 or now - tonumber(f[9] or '0') > grace) then return 2 end
    step = 'retry'
  else
    for _, e in ipairs(older) do
      if e[1] == ARGV[2] and e[2] > now then return 2 end
    end
    return 0
  end
end
local kept = {}
local function keep(hash, exp)
  if hash and tonumber(exp) > now and #kept < tonumber(ARGV[9]) then kept[#kept + 1] = {hash, tonumber(exp)} end
end
if step == 'retry' then
  -- The successor nobody received: its access token goes, the previous access token stays.
  if f[7] then redis.call('HDEL', KEYS[1], 'at:' .. f[7]) end
  keep(f[3], f[4])
else
  if f[8] then redis.call('HDEL', KEYS[1], 'at:' .. f[8]) end
  redis.call('HSET', KEYS[1], 'pat', f[7] or '')
  if step == 'rotate' then keep(f[5], f[6]) end
end
for _, e in ipairs(older) do keep(e[1], e[2]) end
redis.call('HSET', KEYS[1], 'gen', tonumber(f[2]) + 1, 'at', ARGV[3], 'at:' .. ARGV[3], ARGV[4])
if ARGV[5] ~= '' then
  if step == 'rotate' then redis.call('HSET', KEYS[1], 'prt', f[3] or '', 'prtExp', f[4] or '0', 'prtAt', ARGV[1]) end
  local pending = '1'
  if step == 'first' then pending = '0' end
  redis.call('HSET', KEYS[1], 'rt', ARGV[5], 'rtExp', ARGV[6], 'rtAt', ARGV[1], 'pending', pending)
  if #kept > 0 then redis.call('HSET', KEYS[1], 'older', cjson.encode(kept)) else redis.call('HDEL', KEYS[1], 'older') end
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[7]) then redis.call('PEXPIRE', KEYS[1], ARGV[7]) end
return 1
`);

/** Confirms a rotation: KEYS[1] grant; ARGV[1] the successor's hash. HSET keeps the key's TTL. */
export const CONFIRM = script(`
if redis.call('HGET', KEYS[1], 'rt') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'pending', '0')
return 1
`);

/**
 * Creates a client's own grant holding one access token: KEYS[1] grant; ARGV grant record JSON,
 * access hash, access JSON, ttl. No code (an empty hash matches none), no refresh token, no index.
 */
export const SAVE_CLIENT_TOKEN = script(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'code', '', 'codeExp', '0', 'record', ARGV[1], 'consumed', '1', 'gen', '1', 'at', ARGV[2], 'at:' .. ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`);

/** Ends one access token: KEYS[1] grant; ARGV[1] its hash. */
export const REVOKE_ACCESS = script(`return redis.call('HDEL', KEYS[1], 'at:' .. ARGV[1])`);

/** Deletes a grant's record (revocation) or a consent: KEYS[1]. */
export const DELETE = script(`return redis.call('DEL', KEYS[1])`);

/**
 * Indexes a new grant of a pair: KEYS[1] the pair's index; ARGV[1] grant id. Scores count up, so
 * the lowest are the members checked longest ago; answers two of them, for saveCode to prune.
 */
export const INDEX_ADD = script(`
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('ZADD', KEYS[1], (tonumber(top[2]) or 0) + 1, ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, 1)
`);

/** Records index checks: KEYS[1] index; ARGV pairs of grant id and '1' (alive: moves to the end) or '0' (gone: removed). */
export const INDEX_CHECKED = script(`
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
export const USE_ONCE = script(`
local expires = tonumber(redis.call('GET', KEYS[1]))
if expires and expires > tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`);

/** The grant ids of a pair: KEYS[1] index. */
export const INDEX_MEMBERS = script(`return redis.call('ZRANGE', KEYS[1], 0, -1)`);

/**
 * Counts one attempt in a brute-force window (docs/oauth.md, "Brute-force limits"): KEYS[1] the
 * window's set of attempt ids, KEYS[2] the ids given back (a sorted set, each scored by when it
 * is forgotten); ARGV attempt id, window (ms), now (the store's clock, ms).
 * A key without a TTL (new: the last window ended with its TTL) starts a new window; an id
 * already there changes nothing, so a resent call counts once; an id given back and not yet
 * forgotten counts nothing, so a count that reaches the store after its own give-back (for the
 * first time, or again) does not stay. Forgotten ids leave KEYS[2] first. Answers {attempts counted, ms left}; {0, 0} when there
 * is no window.
 */
export const RESERVE_FAILURE = script(`
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  local n = redis.call('SCARD', KEYS[1])
  if n == 0 then return {0, 0} end
  return {n, redis.call('PTTL', KEYS[1])}
end
redis.call('SADD', KEYS[1], ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  left = tonumber(ARGV[2])
end
return {redis.call('SCARD', KEYS[1]), left}
`);

/**
 * Gives one attempt back: KEYS[1] the window's set, KEYS[2] the ids given back; ARGV attempt id,
 * window (ms), now (the store's clock, ms). The id leaves the window, and is remembered as given
 * back for a window's length from this give-back (scored by that end) whether it was counted or
 * not: a count of it that still arrives counts nothing, be it one that never landed before, or a
 * copy of one that did (a client's resend landed, and the bytes first sent reach Redis late).
 * The forgotten ones leave first, so KEYS[2] holds one window's give-backs at most, and its TTL,
 * renewed to a window, goes with the last of them. Answers 1 when the id was counted, else 0.
 */
export const GIVE_BACK_FAILURE = script(`
local found = redis.call('SREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return found
`);

/** A window's state: KEYS[1] its set. Answers {attempts counted, ms left}; {0, 0} when none. */
export const PEEK_FAILURES = script(`
local n = redis.call('SCARD', KEYS[1])
if n == 0 then return {0, 0} end
return {n, redis.call('PTTL', KEYS[1])}
`);

/**
 * Marks a caller that proved a client's secret (known-callers.ts): KEYS[1] the client's zset of
 * callers, each scored by when its mark ends; ARGV caller, now (ms), lifetime (ms), most kept.
 * Ended marks leave first, then all but the most recent ones; the key goes a lifetime after its
 * last mark. Every mark lasts as long from its write, so the highest scores are the most recent.
 * The marks are the platform's own and can be written again, so a key of another type in their
 * place (written around the platform) is deleted rather than left to fail every lookup; until a
 * mark is written again, KNOWN_CALLER reads such a key as no mark (docs/oauth.md#brute-force-limits).
 */
export const REMEMBER_CALLER = script(`
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'zset' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

/** Whether a caller's mark (REMEMBER_CALLER) is live: KEYS[1] the client's zset; ARGV caller, now (ms). Answers 1 or 0. */
export const KNOWN_CALLER = script(`
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then return 0 end
local ends = redis.call('ZSCORE', KEYS[1], ARGV[1])
if ends and tonumber(ends) > tonumber(ARGV[2]) then return 1 end
return 0
`);
