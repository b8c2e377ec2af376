/**
 * One guarded GET three ways: bare Express, Express + courier-platform's quota guard (memory,
 * Redis, PostgreSQL counters; three calendar periods), and the usual rate limiters in front of
 * the same route (express-rate-limit with one window, rate-limiter-flexible with three on memory
 * and Redis and one on PostgreSQL).
 */
import { headToHead, type Contender, type HeadToHead, type HeadToHeadOptions } from '../lib/head-to-head.js';
import { authorizeGrant, mapLimit } from '../lib/oauth.js';
import { isPingBody, PING_PATH } from '../lib/ping.js';
import { fixed, pairedRatio, summaryOf, table } from '../lib/report.js';
import type { ProbeResult, Scenario } from '../lib/scenario.js';
import { measureRoundTrips, type RoundTrips, type StoreKind } from '../lib/round-trips.js';
import { withServerRun } from '../lib/server-run.js';
import { startServer } from '../lib/servers.js';
import { DATABASE_URL, REDIS_URL, settledTableWrites, writesPerCall } from '../lib/stores.js';

/** Every limit of every target: finite (so the check runs) and out of reach of any run. */
const LIMIT = 1_000_000_000;
const PROBE = { requests: 2_000, connections: 8 };

interface Spec {
  id: string;
  label: string;
  /** Where the counters live; undefined for bare Express. */
  store: StoreKind | undefined;
  /** `quota-guard.ts` with this quota store, or `quota-peer.ts` with this peer. */
  guard?: 'memory' | 'redis' | 'postgres';
  peer?: 'bare' | 'floor' | 'erl-memory' | 'erl-redis' | 'rlf-memory' | 'rlf-redis' | 'rlf-postgres';
  /** PostgreSQL: the table its counters live in, in the run's schema. */
  table?: string;
}

// The compared pairs are neighbours (bare | guard-memory, guard-redis | erl-redis,
// guard-postgres | rlf-postgres), so each round's ratio compares runs seconds apart (see pairedRatio).
const SPECS: Spec[] = [
  { id: 'bare', label: 'bare Express', store: undefined, peer: 'bare' },
  { id: 'guard-memory', label: 'courier-platform guard, memory (3 periods)', store: 'memory', guard: 'memory' },
  { id: 'floor', label: 'floor: mount + header-setting async middleware, no logic', store: undefined, peer: 'floor' },
  { id: 'erl-memory', label: 'express-rate-limit, memory (1 window)', store: 'memory', peer: 'erl-memory' },
  { id: 'rlf-memory', label: 'rate-limiter-flexible, memory (3 windows)', store: 'memory', peer: 'rlf-memory' },
  { id: 'guard-redis', label: 'courier-platform guard, Redis (3 periods)', store: 'redis', guard: 'redis' },
  { id: 'erl-redis', label: 'express-rate-limit + rate-limit-redis (1 window)', store: 'redis', peer: 'erl-redis' },
  { id: 'rlf-redis', label: 'rate-limiter-flexible, Redis (3 windows)', store: 'redis', peer: 'rlf-redis' },
  { id: 'guard-postgres', label: 'courier-platform guard, PostgreSQL (3 periods)', store: 'postgres', guard: 'postgres', table: 'courier_quota_counter' },
  { id: 'rlf-postgres', label: 'rate-limiter-flexible, PostgreSQL (1 window)', store: 'postgres', peer: 'rlf-postgres', table: 'rlf_counter' },
];

export const quotaScenario: Scenario = {
  name: 'quota',
  title: 'Quota guard (GET /openapi/v1/ping): bare Express vs courier-platform\'s guard vs express-rate-limit and rate-limiter-flexible',
  notes: [
    `Every target is its own Express 5 process answering the same \`{"ok":true}\`. Every limit is ${LIMIT.toLocaleString('en-US')} (finite, so every call runs the whole check-and-charge path; nothing is rejected). Every limiter counts one key for all calls (one client id, or the one caller IP).`,
    'courier-platform guard: `app.use(courierPlatform({ courier: false, oauth, quota: { store, defaults: { minute, day, month } } }))` and `app.get(path, platform.quota(), handler)`; every call validates a Bearer access token (made at set-up through authorize → consent → token on that server; OAuth store in memory everywhere, so the token lookup costs the same and sends nothing to Redis or PostgreSQL), charges the minute, day and month and sets the RateLimit headers. Redis: ioredis, one connection, the quota store\'s recommended options. PostgreSQL: pg.Pool (default size 10), default `synchronousCommit` (the server\'s, on).',
    'express-rate-limit 8: `rateLimit({ windowMs: 60 000, limit })` on the route, its default headers (X-RateLimit-*), memory store or rate-limit-redis 6 (`sendCommand` over ioredis `call`). rate-limiter-flexible 11: three limiters (60 s, 1 day, 24 days: RateLimiterMemory expires keys with setTimeout, capped at 24.8 days) consumed together per call by a 10-line middleware, no headers; RateLimiterRedis over ioredis. RateLimiterPostgres: one limiter (60 s) through the same middleware, on its own pg.Pool of the guard\'s size (10), its table in the run\'s schema.',
    'The peers need no token. The floor is Express with what any guard of this route costs before its own logic: an `app.use` layer where the platform is mounted, and a second route handler that sets two RateLimit headers of the guard\'s length and calls `next` from a promise; it is sent a Bearer header of the guard\'s length.',
  ],
  singleShare: 0.4,

  setup(options) {
    return withServerRun('quota', async ({ token, schema, stores, key, servers, teardown }) => {
      /** The client name of a server's Redis connection: MONITOR attributes commands by it. */
      const redisName = (server: string) => `${token}_${server}`;
      const env = {
        BENCH_QUOTA_LIMIT: String(LIMIT),
        BENCH_SIGNING_KEY: key,
        BENCH_REDIS_URL: REDIS_URL,
        BENCH_PREFIX: token,
        BENCH_DATABASE_URL: DATABASE_URL,
        BENCH_PG_SCHEMA: schema,
      };
      /** Starts `spec`'s server as `name` and makes its target (a guard's token comes from that server's own OAuth flow). */
      const launch = async (spec: Spec, name: string): Promise<Contender> => {
        const redis = { BENCH_REDIS_NAME: redisName(name) };
        const server = await (spec.guard
          ? startServer(name, 'quota-guard.ts', { ...env, ...redis, BENCH_QUOTA_STORE: spec.guard })
          : startServer(name, 'quota-peer.ts', { ...env, ...redis, BENCH_PEER: spec.peer! }));
        servers.push(server);
        const headers: Record<string, string> = {};
        if (spec.guard) headers.authorization = `Bearer ${(await authorizeGrant(server.url, 'quota-app', 'openid')).access_token}`;
        // The floor gets a Bearer header of the same shape, so its requests are as long as the guard's.
        if (spec.peer === 'floor') headers.authorization = `Bearer ${'x'.repeat(16)}.${'y'.repeat(43)}`;
        return { server, target: { id: spec.id, label: spec.label, pid: server.pid, url: `${server.url}${PING_PATH}`, method: 'GET', headers, verify: isPingBody } };
      };
      // Three at a time: ten processes compiling TypeScript at once can starve a small machine for a minute.
      const started = await mapLimit(SPECS, 3, (spec) => launch(spec, spec.id));
      const targets = started.map((contender) => contender.target);
      const specOf = (id: string) => SPECS.find((spec) => spec.id === id)!;
      // Each pair runs on two servers started for it, so that neither side brings the heap and
      // the JIT state of the rounds: a server fresh from start-up against one that went through
      // every round is not an A/A pair.
      const freshPair = async (a: string, b: string, h2h: HeadToHeadOptions): Promise<HeadToHead> => {
        const pair = await Promise.all([launch(specOf(a), `${a}-h2h-a`), launch(specOf(b), `${b}-h2h-b`)]);
        try {
          return await headToHead(pair[0], pair[1], h2h);
        } finally {
          await Promise.all(pair.map((contender) => contender.server.stop()));
        }
      };

      return {
        targets,
        teardown,
        async probe(summary): Promise<ProbeResult> {
          const counted = new Map<string, RoundTrips>();
          const writesBefore = await settledTableWrites(stores.pool, schema);
          for (const [i, spec] of SPECS.entries()) {
            if (spec.store !== 'redis' && spec.store !== 'postgres') continue;
            const probe = { store: spec.store, target: targets[i]!, serverUrl: started[i]!.server.url, redisName: redisName(spec.id), admin: stores.redis, ...PROBE };
            counted.set(spec.id, await measureRoundTrips(probe));
          }
          const writesAfter = await settledTableWrites(stores.pool, schema);
          const rowVersions = new Map(
            SPECS.filter((spec) => spec.table).map((spec) => [spec.id, writesPerCall(writesBefore, writesAfter, spec.table!, counted.get(spec.id)!.requests)]),
          );
          const h2h = { rounds: options.rounds, durationS: options.duration, connections: options.connections };
          const control = await freshPair('bare', 'bare', h2h);
          const memory = await freshPair('bare', 'guard-memory', h2h);
          const versus = await freshPair('erl-redis', 'guard-redis', h2h);
          const pgVersus = await freshPair('rlf-postgres', 'guard-postgres', h2h);
          const pairs: [string, HeadToHead][] = [
            ['A/A control: bare Express ÷ bare Express', control],
            ['guard (memory) ÷ bare Express', memory],
            ['guard (Redis, 3 periods) ÷ express-rate-limit + rate-limit-redis (1 window)', versus],
            ['guard (PostgreSQL, 3 periods) ÷ rate-limiter-flexible, PostgreSQL (1 window)', pgVersus],
          ];
          const h2hErrors = pairs.reduce((sum, [, pair]) => sum + pair.errors, 0);
          const biased = Math.abs(control.median - 1) > 0.03;

          const redisGuard = counted.get('guard-redis')!;
          const rows = SPECS.map((spec) => {
            const s = summaryOf(summary, spec.id);
            const rows = rowVersions.get(spec.id);
            const detail = `${counted.get(spec.id)?.detail ?? (spec.store === 'memory' ? '0 (in process)' : '—')}${rows ? `; ${rows}` : ''}`;
            return [spec.label, fixed(s.rps, 0), fixed(pairedRatio(summary, spec.id, 'bare'), 2), fixed(s.p50, 0), fixed(s.p99, 0), detail];
          });
          const warnings = [...counted]
            .filter(([, c]) => !c.consistent)
            .map(([id, c]) => `⚠ ${id}: INFO commandstats and MONITOR disagree (${c.redis!.topLevel} vs ${c.redis!.sent} top-level commands); ${c.redis!.others} commands came from other clients.`);
          const probeErrors = [...counted.values()].reduce((sum, c) => sum + c.errors, 0);
          // Beside its one EVALSHA a call may read the stored rules: once per client and path per
          // rule-cache period (5 s), so at most a handful of HMGETs in the whole probe.
          const sentBy = redisGuard.redis?.byCommand.sent ?? {};
          const evalsha = sentBy.EVALSHA ?? sentBy.evalsha ?? Number.NaN;
          const others = Object.entries(sentBy).filter(([command]) => command.toUpperCase() !== 'EVALSHA' && command.toUpperCase() !== 'HMGET');
          const ruleReads = sentBy.HMGET ?? sentBy.hmget ?? 0;
          return {
            ratios: [
              {
                label: 'guard (Redis): Redis round trips per guarded call',
                value: redisGuard.perCall,
                unit: 'round trips',
                goal: '1 EVALSHA each, + stored-rule reads (≤ 1 per 5 s)',
                pass: evalsha === redisGuard.requests && others.length === 0 && ruleReads <= 2 && redisGuard.consistent && redisGuard.errors === 0,
              },
            ],
            tables: [
              table(
                ['Target', 'req/s', '÷ bare Express', 'p50 ms', 'p99 ms', 'store round trips per call'],
                ['l', 'r', 'r', 'r', 'r', 'l'],
                rows,
              ),
              table(
                ['Head-to-head pair', 'median', 'min', 'max', 'per round'],
                ['l', 'r', 'r', 'r', 'l'],
                pairs.map(([label, pair]) => [label, fixed(pair.median, 3), fixed(Math.min(...pair.ratios), 3), fixed(Math.max(...pair.ratios), 3), pair.ratios.map((r) => fixed(r, 2)).join(' ')]),
              ),
            ],
            notes: [
              `Floor (no target): the floor keeps ${fixed(pairedRatio(summary, 'floor', 'bare'), 2)} of bare Express, and the memory guard ${fixed(pairedRatio(summary, 'guard-memory', 'floor'), 2)} of the floor (paired; the guard and the floor are neighbours, the floor and bare Express are not). What the guard costs beyond the floor is its own logic: token lookup, three periods, the header values.`,
              `Round trips (after the rounds, nothing else of the bench running; ${PROBE.requests} calls on ${PROBE.connections} connections per Redis or PostgreSQL target): Redis, the commands the server received on the target's connection (MONITOR, by client address), then the server's \`INFO commandstats\` delta per call, which also counts the commands Lua scripts run (in Lua) and must equal the first figure once those and other clients' commands are taken out. PostgreSQL: statements the target's pool sent, BEGIN and COMMIT included (a counter around each pooled connection's \`query\`; pg sends each statement with its parameters in one write and waits for its answer, so a statement is a round trip), and the row versions the target's table received (inserts plus updates, \`pg_stat_user_tables\`, read once the server has published every backend's counts, about 10 s after the last call).`,
              `Head-to-head (after the rounds): each pair runs on two servers started for it, loaded at the same time, ${Math.floor(options.connections / 2)} connections each, ${options.rounds} runs of ${options.duration} s after 3 s of warm-up, either server's load started first in turn, ${control.pinned ? 'both pinned to the last CPU while the runner (autocannon) runs on the others' : '**unpinned** (no taskset, or one CPU)'}; Redis and PostgreSQL are left alone. Both see the same machine at the same moment, so the ratio of their req/s is the inverse ratio of their CPU cost per request, free of most of the drift that makes sequential rounds on this kind of VM swing by ±30 %. A cross-check of the checks above, which pair sequential rounds; the A/A control (two bare Express servers) shows the method's own bias.`,
              ...(biased ? [`⚠ The A/A control is ${fixed(control.median, 3)}, more than 3 % from 1: the head-to-head figures of this run are off by about as much.`] : []),
              ...(h2hErrors > 0 ? [`⚠ ${h2hErrors} requests of the head-to-head runs failed.`] : []),
              ...warnings,
              ...(probeErrors > 0 ? [`⚠ ${probeErrors} requests of the round-trip probe failed.`] : []),
            ],
            data: { roundTrips: Object.fromEntries(counted), headToHead: Object.fromEntries(pairs) },
          };
        },
      };
    });
  },

  ratios(summary) {
    const kept = pairedRatio(summary, 'guard-memory', 'bare');
    const versus = pairedRatio(summary, 'guard-redis', 'erl-redis');
    const pgVersus = pairedRatio(summary, 'guard-postgres', 'rlf-postgres');
    return [
      { label: 'guard (memory) req/s ÷ bare Express req/s', value: kept, unit: '', goal: '≥ 0.85', pass: kept >= 0.85 },
      { label: 'guard (Redis, 3 periods) req/s ÷ express-rate-limit + rate-limit-redis (1 window) req/s', value: versus, unit: '', goal: '≥ 1.00', pass: versus >= 1 },
      { label: 'guard (PostgreSQL, 3 periods) req/s ÷ rate-limiter-flexible, PostgreSQL (1 window) req/s', value: pgVersus, unit: '', goal: '≥ 1.00', pass: pgVersus >= 1 },
    ];
  },
};
