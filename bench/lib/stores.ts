/**
 * Runner side of the Redis and PostgreSQL scenarios: where the servers are, a name unique to this
 * run (every Redis key and PostgreSQL schema the run creates contains it), round-trip counting
 * with `INFO commandstats`, and the clean-up of everything the run created.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { registerCleanup } from './cleanup.js';

export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Lower case, digits and `_` only: valid in a Redis key, a PostgreSQL schema name and a rate limiter prefix. */
export function runToken(label: string): string {
  return `cpbench_${label}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** Calls per command (`get`, `evalsha`, `client|setname`, ...) since the Redis server started. */
export async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const text = await redis.info('commandstats');
  const calls = new Map<string, number>();
  for (const line of text.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match) calls.set(match[1]!, Number(match[2]));
  }
  return calls;
}

/** Commands counted between two snapshots, without `ignore` (the probe's own INFO). */
export function commandDelta(before: Map<string, number>, after: Map<string, number>, ignore: readonly string[] = ['info']): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, calls] of after) {
    const added = calls - (before.get(name) ?? 0);
    if (added > 0 && !ignore.includes(name)) delta.set(name, added);
  }
  return delta;
}

export const total = (counts: ReadonlyMap<string, number>): number => [...counts.values()].reduce((sum, n) => sum + n, 0);

/** `1.00 EVALSHA` or `1.00 GET + 2.00 EVALSHA`, per request, most frequent first. */
export function perRequest(counts: ReadonlyMap<string, number>, requests: number): string {
  if (counts.size === 0) return '0';
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, calls]) => `${(calls / requests).toFixed(2)} ${name.toUpperCase()}`)
    .join(' + ');
}

/** What the Redis server saw while `work` ran. */
export interface RedisCount {
  /** `INFO commandstats` delta (INFO excluded): every command the server ran, those run by Lua scripts included. */
  commandstats: Map<string, number>;
  /** Commands the named connections sent (MONITOR, by client address): their round trips. */
  sent: Map<string, number>;
  /** Commands run inside Lua scripts (MONITOR source `lua`). */
  inScripts: Map<string, number>;
  /** Commands any other client sent meanwhile (the runner's own INFO and ECHO excluded). */
  others: number;
  /** Top-level commands by `INFO commandstats`: its delta minus what scripts ran and what other clients sent. */
  topLevel: number;
}

function clientAddresses(list: string): Map<string, string> {
  const byName = new Map<string, string>();
  for (const line of list.split('\n')) {
    const name = /(?:^| )name=(\S*)/.exec(line)?.[1];
    const addr = /(?:^| )addr=(\S+)/.exec(line)?.[1];
    if (name && addr) byName.set(name, addr);
  }
  return byName;
}

/**
 * Counts the Redis commands of `work`. `INFO commandstats` counts every command the server ran,
 * including those a Lua script runs (an EVALSHA running GET, INCRBY and PEXPIRE adds 4 calls)
 * and those of any other client; so a MONITOR connection, open only for this, attributes each
 * command to its source: the connections named `connectionNames` (the target's round trips),
 * `lua`, or someone else. Bounded: the MONITOR feed is drained up to an ECHO marker, 10 s at most.
 */
export async function countRedisCommands<T>(admin: Redis, connectionNames: readonly string[], work: () => Promise<T>): Promise<{ result: T; count: RedisCount }> {
  const addresses = clientAddresses(String(await admin.client('LIST')));
  // By CLIENT INFO, not by name: the MONITOR connection is a duplicate of `admin`, name included.
  const adminAddr = /(?:^| )addr=(\S+)/.exec(String(await admin.client('INFO')))?.[1];
  const targets = new Set<string>();
  for (const name of connectionNames) {
    const addr = addresses.get(name);
    if (!addr) throw new Error(`no Redis connection named ${name}`);
    targets.add(addr);
  }
  const marker = `cpbench-probe-end-${Date.now().toString(36)}`;
  const sent = new Map<string, number>();
  const inScripts = new Map<string, number>();
  let others = 0;
  let reachedMarker: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => (reachedMarker = resolve));
  const bump = (counts: Map<string, number>, name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);

  const monitor = await admin.monitor();
  try {
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      const name = (args[0] ?? '').toLowerCase();
      if (source === adminAddr) {
        if (name === 'echo' && args[1] === marker) reachedMarker();
        return;
      }
      if (source === 'lua') bump(inScripts, name);
      else if (targets.has(source)) bump(sent, name);
      else others++;
    });
    const before = await commandStats(admin);
    const result = await work();
    const after = await commandStats(admin);
    await admin.echo(marker);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise<void>((_, reject) => (timer = setTimeout(() => reject(new Error('MONITOR did not show the end marker within 10 s')), 10_000)))]);
    clearTimeout(timer);
    const commandstats = commandDelta(before, after);
    return { result, count: { commandstats, sent, inScripts, others, topLevel: total(commandstats) - total(inScripts) - others } };
  } finally {
    monitor.disconnect();
  }
}

/** Row versions a table received: `pg_stat_user_tables` counters since the statistics were reset. */
export interface TableWrites {
  inserted: number;
  updated: number;
  /** Updates that found room on the same page and touched no index (HOT): the cheapest kind. */
  hot: number;
}

/**
 * The write counters of every table in `schema`. A backend publishes its counts at most once a
 * second, and when it goes idle within that second, 10 s later (PostgreSQL 15+): read 11 s after
 * the last call, every count of it is in.
 */
export async function settledTableWrites(pool: pg.Pool, schema: string): Promise<Map<string, TableWrites>> {
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const { rows } = await pool.query(
    'SELECT relname, n_tup_ins::float8 AS inserted, n_tup_upd::float8 AS updated, n_tup_hot_upd::float8 AS hot FROM pg_stat_user_tables WHERE schemaname = $1',
    [schema],
  );
  return new Map(rows.map((row: { relname: string } & TableWrites) => [row.relname, { inserted: row.inserted, updated: row.updated, hot: row.hot }]));
}

/** `0.10 row versions (0.00 inserted, 0.10 updated, 0.10 HOT)` per call, for a table cell. */
export function writesPerCall(before: ReadonlyMap<string, TableWrites>, after: ReadonlyMap<string, TableWrites>, table: string, calls: number): string {
  const was = before.get(table) ?? { inserted: 0, updated: 0, hot: 0 };
  const now = after.get(table);
  if (!now || calls === 0) return 'row versions n/a';
  const per = (field: keyof TableWrites) => (now[field] - was[field]) / calls;
  return `${(per('inserted') + per('updated')).toFixed(2)} row versions (${per('inserted').toFixed(2)} inserted, ${per('updated').toFixed(2)} updated, ${per('hot').toFixed(2)} of them HOT)`;
}

/** Deletes every key containing `token` (SCAN + UNLINK, bounded); answers how many went. */
export async function deleteKeysOf(redis: Redis, token: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  for (let i = 0; i < 100_000; i++) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${token}*`, 'COUNT', 1000);
    if (keys.length > 0) deleted += await redis.unlink(...keys);
    cursor = next;
    if (cursor === '0') break;
  }
  return deleted;
}

export interface RunStores {
  /** Admin connection of the runner: INFO and clean-up only. */
  redis: Redis;
  pool: pg.Pool;
  /** Deletes the run's keys and schemas and closes the connections; safe to call twice. */
  cleanup(): Promise<void>;
}

/**
 * Connects the runner to Redis and PostgreSQL for one scenario run and creates `schemas`. The
 * clean-up deletes every key containing `token` and drops `schemas`; it is also registered for Ctrl-C.
 */
export async function connectRunStores(token: string, schemas: readonly string[]): Promise<RunStores> {
  for (const schema of schemas) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema) || !schema.includes(token)) throw new Error(`refusing to manage schema ${schema}`);
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectionName: `${token}_runner` });
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined);
  const cleanup = registerCleanup(async () => {
    const problems: string[] = [];
    try {
      const keys = await deleteKeysOf(redis, token);
      if (keys > 0) process.stderr.write(`  cleaned up ${keys} Redis keys of ${token}\n`);
    } catch (error) {
      problems.push(`Redis: ${(error as Error).message}`);
    }
    for (const schema of schemas) {
      try {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } catch (error) {
        problems.push(`PostgreSQL ${schema}: ${(error as Error).message}`);
      }
    }
    redis.disconnect();
    await pool.end().catch(() => undefined);
    if (problems.length > 0) throw new Error(`clean-up of ${token} incomplete: ${problems.join('; ')}`);
  });
  try {
    await redis.connect();
    // Made here, so that servers which only create tables (rate-limiter-flexible's) find them.
    for (const schema of schemas) await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } catch (error) {
    await cleanup().catch(() => undefined);
    throw new Error(`cannot reach Redis (${REDIS_URL}) or PostgreSQL (${DATABASE_URL}): ${(error as Error).message}`);
  }
  return { redis, pool, cleanup };
}
