/**
 * The quota scenario's peers on Express 5, each answering GET /openapi/v1/ping like the guard's
 * server, chosen by BENCH_PEER:
 *
 * - `bare`: no limiter;
 * - `erl-memory`: express-rate-limit with its memory store, one window (a minute);
 * - `erl-redis`: express-rate-limit + rate-limit-redis (sendCommand over ioredis), one window;
 * - `rlf-memory` / `rlf-redis`: rate-limiter-flexible, three windows (minute, day, 24 days)
 *   consumed on every call, RateLimiterMemory / RateLimiterRedis.
 *
 * Every limiter keys on the caller's IP and has limits no run comes near (BENCH_QUOTA_LIMIT).
 * None needs a token.
 */
import { createServer } from 'node:http';
import express, { type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { announceReady, listenLocal, requireEnv, stopServer } from '../lib/child.js';
import { connectRedis } from '../lib/counted.js';
import { PING_BODY, PING_PATH } from '../lib/ping.js';

const peer = requireEnv('BENCH_PEER');
const limit = Number(requireEnv('BENCH_QUOTA_LIMIT'));
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

let redis: Redis | undefined;
let limiter: RequestHandler | undefined;
const prefix = requireEnv('BENCH_PREFIX');
switch (peer) {
  case 'bare':
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
  default:
    throw new Error(`BENCH_PEER must be bare, erl-memory, erl-redis, rlf-memory or rlf-redis, got ${peer}`);
}

const app = express();
const answer: RequestHandler = (_req, res) => {
  res.json(PING_BODY);
};
if (limiter) app.get(PING_PATH, limiter, answer);
else app.get(PING_PATH, answer);

const server = createServer(app);
const url = await listenLocal(server);
announceReady(url, () => {
  stopServer(server);
  redis?.disconnect();
});
