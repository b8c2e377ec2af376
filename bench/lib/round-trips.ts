/**
 * Store round trips per request of one target, for the scenarios' probes: an exact number of
 * requests with nothing else of the bench running. Redis: counted on the server (MONITOR by
 * connection name, cross-checked with INFO commandstats, lib/stores.ts). PostgreSQL: statements
 * the child's pool sent (lib/counted.ts; pg_stat_statements is seldom loaded). Memory: none.
 */
import type { Redis } from 'ioredis';
import { readChildStats } from './counted.js';
import { chainedLoad } from './load.js';
import type { Target } from './scenario.js';
import { countRedisCommands, perRequest, total } from './stores.js';

export type StoreKind = 'memory' | 'redis' | 'postgres';

export interface RoundTrips {
  store: StoreKind;
  requests: number;
  errors: number;
  /** Round trips to the store per request. */
  perCall: number;
  /** For a table cell, e.g. `1.00 EVALSHA; commandstats 10.00 (9.00 in Lua)`. */
  detail: string;
  /** Redis: what the server counted (totals over the probe; JSON-friendly). */
  redis?: {
    /** Top-level commands the target's connection sent (MONITOR). */
    sent: number;
    /** Top-level commands by INFO commandstats (minus script-run and foreign ones). */
    topLevel: number;
    /** Commands of other clients during the probe. */
    others: number;
    byCommand: { sent: Record<string, number>; commandstats: Record<string, number>; inScripts: Record<string, number> };
  };
  /** Redis: INFO commandstats (minus script-run and foreign commands) agrees with what MONITOR attributed to the target. */
  consistent: boolean;
}

export interface RoundTripProbe {
  store: StoreKind;
  target: Target;
  /** The child's origin (for GET /__bench/stats). */
  serverUrl: string;
  /** Redis: the child's connection name. */
  redisName?: string;
  /** Redis: the runner's admin connection. */
  admin?: Redis;
  requests: number;
  connections: number;
}

export async function measureRoundTrips(probe: RoundTripProbe): Promise<RoundTrips> {
  const run = () => chainedLoad(probe.target, probe.connections, { requests: probe.requests, durationMs: 60_000 });
  if (probe.store === 'redis') {
    if (!probe.admin || !probe.redisName) throw new Error('a Redis probe needs the admin connection and the connection name');
    const { result: load, count } = await countRedisCommands(probe.admin, [probe.redisName], run);
    const requests = load.requests + load.errors;
    const sent = total(count.sent);
    const all = total(count.commandstats);
    return {
      store: 'redis',
      requests,
      errors: load.errors,
      perCall: sent / requests,
      detail: `${perRequest(count.sent, requests)}; commandstats ${(all / requests).toFixed(2)} (${(total(count.inScripts) / requests).toFixed(2)} in Lua)`,
      redis: {
        sent,
        topLevel: count.topLevel,
        others: count.others,
        byCommand: {
          sent: Object.fromEntries(count.sent),
          commandstats: Object.fromEntries(count.commandstats),
          inScripts: Object.fromEntries(count.inScripts),
        },
      },
      consistent: count.topLevel === sent,
    };
  }
  if (probe.store === 'postgres') {
    const before = await readChildStats(probe.serverUrl);
    const load = await run();
    const after = await readChildStats(probe.serverUrl);
    const requests = load.requests + load.errors;
    const perCall = (after.queries - before.queries) / requests;
    return { store: 'postgres', requests, errors: load.errors, perCall, detail: `${perCall.toFixed(2)} statements`, consistent: true };
  }
  // The memory stores live in the server's own process: nothing to count, nothing to run.
  return { store: 'memory', requests: 0, errors: 0, perCall: 0, detail: '0 (in process)', consistent: true };
}
