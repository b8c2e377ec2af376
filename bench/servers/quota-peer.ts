/**
 * The quota scenario's peers on Express 5, each answering GET /openapi/v1/ping like the guard's
 * server, chosen by BENCH_PEER:
 *
 * - `bare`: no limiter;
 * - `floor`: what any guard of this route costs before its own logic: the platform's mount
 *   (an `app.use` layer), a second route handler that sets two RateLimit headers of the guard's
 *   size and calls `next` from a promise, like every limiter with an asynchronous store. The
 *   runner sends it the guard's Authorization header too;
 * - `erl-memory`: express-rate-limit with its memory store, one window (a minute);
 * - `erl-redis`: express-rate-limit + rate-limit-redis (sendCommand over ioredis), one window;
 * - `rlf-memory` / `rlf-redis`: rate-limiter-flexible, three windows (minute, day, 24 days)
 *   consumed on every call, RateLimiterMemory / RateLimiterRedis;
 * - `rlf-postgres`: rate-limiter-flexible's RateLimiterPostgres, one window (a minute), on a pool
 *   of the guard's size (pg's default, 10) in the run's schema.
 *
 * Every limiter keys on the caller's IP and has limits no run comes near (BENCH_QUOTA_LIMIT).
 * None needs a token. GET /__bench/stats reports the PostgreSQL statements this process sent.
 */
import { createServer } from 'node:http';
import express, { type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { announceReady, listenLocal, requireEnv, stopServer } from '../lib/child.js';
import { connectRedis, countedPool, STATS_PATH, statsHandler } from '../lib/counted.js';
import { PING_BODY, PING_PATH } from '../lib/ping.js';

const peer = requireEnv('BENCH_PEER');
const limit = Number(requireEnv('BENCH_QUOTA_LIMIT'));
const prefix = requireEnv('BENCH_PREFIX');
const redisConnection = () => connectRedis(requireEnv('BENCH_REDIS_URL'), requireEnv('BENCH_REDIS_NAME'));
/**
 * Minute, day and "month". RateLimiterMemory expires a key with setTimeout, which Node caps at
 * 2^31-1 ms (24.8 days): a 30-day window would fire after 1 ms and count nothing. 24 days it is,
 * for both rate-limiter-flexible targets.
 */
const RLF_WINDOWS_S = [60, 86_400, 24 * 86_400];

/** All windows consumed per call, as one would write it; 429 when any is exhausted. */
function flexibleMiddleware(limiters: RateLimiterAbstract[]): RequestHandler {
  return (req, res, next) => {
    const key = req.ip ?? 'unknown';
    Promise.all(limiters.map((limiter) => limiter.consume(key))).then(
      () => next(),
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) return next(rejection);
        res.status(429).set('retry-after', String(Math.ceil(rejection.msBeforeNext / 1000))).json({ error: 'too_many_requests' });
      },
    );
  };
}

/** Resolves once the limiter's table exists (it runs CREATE TABLE IF NOT EXISTS itself). */
function postgresLimiter(pool: pg.Pool): Promise<RateLimiterPostgres> {
  return new Promise((resolve, reject) => {
    const created: RateLimiterPostgres = new RateLimiterPostgres(
      { storeClient: pool, schemaName: requireEnv('BENCH_PG_SCHEMA'), tableName: 'rlf_counter', points: limit, duration: 60, keyPrefix: `${prefix}_rlf` },
      (error?: unknown) => (error ? reject(error) : resolve(created)),
    );
  });
}

let redis: Redis | undefined;
let pool: pg.Pool | undefined;
let limiter: RequestHandler | undefined;
switch (peer) {
  case 'bare':
  case 'floor':
    break;
  case 'erl-memory':
    limiter = rateLimit({ windowMs: 60_000, limit });
    break;
  case 'erl-redis':
    redis = await redisConnection();
    limiter = rateLimit({
      windowMs: 60_000,
      limit,
      store: new RedisStore({
        sendCommand: (command: string, ...args: string[]) => redis!.call(command, ...args) as Promise<RedisReply>,
        prefix: `${prefix}_erl:`,
      }),
    });
    break;
  case 'rlf-memory':
    limiter = flexibleMiddleware(RLF_WINDOWS_S.map((duration, i) => new RateLimiterMemory({ points: limit, duration, keyPrefix: `${prefix}_rlf${i}` })));
    break;
  case 'rlf-redis': {
    const client = await redisConnection();
    redis = client;
    limiter = flexibleMiddleware(
      RLF_WINDOWS_S.map((duration, i) => new RateLimiterRedis({ storeClient: client, useRedisPackage: false, points: limit, duration, keyPrefix: `${prefix}_rlf${i}` })),
    );
    break;
  }
  case 'rlf-postgres':
    pool = countedPool(requireEnv('BENCH_DATABASE_URL'));
    limiter = flexibleMiddleware([await postgresLimiter(pool)]);
    break;
  default:
    throw new Error(`BENCH_PEER must be bare, floor, erl-memory, erl-redis, rlf-memory, rlf-redis or rlf-postgres, got ${peer}`);
}

const app = express();
const answer: RequestHandler = (_req, res) => {
  res.json(PING_BODY);
};
if (peer === 'floor') {
  app.use((_req, _res, next) => next());
  app.get(
    PING_PATH,
    (_req, res, next) => {
      res.setHeader('ratelimit-policy', `"minute";q=${limit};w=60, "day";q=${limit};w=86400, "month";q=${limit}`);
      res.setHeader('ratelimit', `"minute";r=${limit - 1};t=45, "day";r=${limit - 1};t=43200, "month";r=${limit - 1};t=1296000`);
      void Promise.resolve().then(() => next());
    },
    answer,
  );
} else if (limiter) app.get(PING_PATH, limiter, answer);
else app.get(PING_PATH, answer);
// Bench plumbing goes after the measured route, so it adds no layer in front of it.
app.get(STATS_PATH, statsHandler);

const server = createServer(app);
const url = await listenLocal(server);
announceReady(url, async () => {
  stopServer(server);
  redis?.disconnect();
  await pool?.end();
});
