/**
 * Child side of the Redis and PostgreSQL scenarios: store connections, and the bench-only
 * `GET /__bench/stats` route reporting how many statements the PostgreSQL pool sent. Redis
 * round trips are counted on the server instead (lib/stores.ts), by the connection's name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import pg from 'pg';
import { requireEnv } from './child.js';

export interface ChildStats {
  /** Statements sent to PostgreSQL (BEGIN, COMMIT and the migration included). */
  queries: number;
}

const stats: ChildStats = { queries: 0 };

export const STATS_PATH = '/__bench/stats';

/** `GET /__bench/stats` for any framework that hands over Node's req/res. */
export function statsHandler(_req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('content-type', 'application/json');
  res.setHeader('cache-control', 'no-store');
  res.end(JSON.stringify(stats));
}

/**
 * One ioredis connection, ready (resolves on `ready`), named so that the runner can tell its
 * commands from anybody else's. Options as the quota store's documentation recommends: fail fast
 * instead of queueing while Redis is away.
 */
export async function connectRedis(url: string, connectionName: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectionName,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  });
  redis.on('error', (error: Error) => console.error(`[redis] ${error.message}`));
  await redis.connect();
  return redis;
}

/** A pg pool (default size, 10) whose connections count every statement they send. */
export function countedPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 2_000 });
  // An idle connection that breaks emits 'error'; unhandled, it would end the process.
  pool.on('error', (error) => console.error(`[pg] ${error.message}`));
  pool.on('connect', (client) => {
    // pool.query() checks a connection out and calls its query(): counting here counts each statement once.
    const query = client.query;
    client.query = function counted(this: pg.PoolClient, ...args: unknown[]) {
      stats.queries++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof client.query;
  });
  return pool;
}

/** Reads a child's counters (runner side). */
export async function readChildStats(baseUrl: string): Promise<ChildStats> {
  const response = await fetch(`${baseUrl}${STATS_PATH}`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`${baseUrl}${STATS_PATH} answered HTTP ${response.status}`);
  return (await response.json()) as ChildStats;
}


export interface ChildStore<T> {
  store: T;
  redis?: Redis;
  pool?: pg.Pool;
}

/**
 * The store a bench child runs on, chosen by `kind` (memory, redis, postgres): a named Redis
 * connection (so its commands can be told apart) or a pool that counts its statements.
 */
export async function childStore<T>(
  kind: string,
  make: { memory: () => T; redis: (client: Redis) => T; postgres: (pool: pg.Pool) => T },
): Promise<ChildStore<T>> {
  if (kind === 'memory') return { store: make.memory() };
  if (kind === 'redis') {
    const redis = await connectRedis(requireEnv('BENCH_REDIS_URL'), requireEnv('BENCH_REDIS_NAME'));
    return { store: make.redis(redis), redis };
  }
  if (kind === 'postgres') {
    const pool = countedPool(requireEnv('BENCH_DATABASE_URL'));
    return { store: make.postgres(pool), pool };
  }
  throw new Error(`the bench store must be memory, redis or postgres, got ${kind}`);
}
