/**
 * The OAuth server's hot endpoints on each store: userinfo (GET with a Bearer token) and the
 * token endpoint's refresh_token and client_credentials grants. Every refresh rotates the token,
 * and presenting a rotated one revokes the grant, so each virtual connection chains its own
 * grant's refresh tokens; a client_credentials request can be replayed as it is.
 * The probe counts the store round trips of one call of each.
 */
import type { MeasureOptions } from '../lib/measure.js';
import { authorizeGrant, clientBasicAuth, mapLimit, type TokenSet } from '../lib/oauth.js';
import { fixed, summaryOf, table } from '../lib/report.js';
import type { ProbeResult, Ratio, RequestChain, Scenario, Target } from '../lib/scenario.js';
import { measureRoundTrips, type StoreKind } from '../lib/round-trips.js';
import { withServerRun } from '../lib/server-run.js';
import { startServer, type ServerProcess } from '../lib/servers.js';
import { DATABASE_URL, REDIS_URL } from '../lib/stores.js';

const STORES: readonly StoreKind[] = ['memory', 'redis', 'postgres'];
const STORE_LABEL: Record<StoreKind, string> = { memory: 'memory', redis: 'Redis', postgres: 'PostgreSQL' };

/** Requests of the round-trip probe (exact counts, few connections). */
const PROBE_USERINFO = { requests: 2_000, connections: 8 };
const PROBE_REFRESH = { requests: 120, connections: 4 };
const PROBE_CLIENT_CREDENTIALS = { requests: 1_000, connections: 8 };

/** A client_credentials answer: an access token and nothing else (RFC 6749 4.4.3). */
const isClientToken = (body: string) => body.startsWith('{"access_token":"') && !body.includes('"refresh_token"') && !body.includes('"id_token"');

interface RefreshState {
  token: string;
}

/**
 * Connection i keeps refreshing grant i: the newest refresh token is carried from answer to
 * request. A failed refresh keeps the old token; if the server had rotated it, the next call is a
 * reuse that revokes the grant, and every later call of this chain fails too (counted as errors).
 */
function refreshChain(state: RefreshState): RequestChain {
  return {
    next: () => ({ body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: state.token }).toString() }),
    answer(status, body) {
      if (status !== 200) return false;
      try {
        const tokens = JSON.parse(body) as Partial<TokenSet>;
        if (typeof tokens.refresh_token !== 'string' || typeof tokens.access_token !== 'string') return false;
        state.token = tokens.refresh_token;
        return true;
      } catch {
        return false;
      }
    },
  };
}

interface StoreRun {
  kind: StoreKind;
  server: ServerProcess;
  userinfo: Target;
  refresh: Target;
  clientCredentials: Target;
  /** One chain per connection, for the rounds; the probe uses the first few. */
  chains: RequestChain[];
}

export const oauthScenario: Scenario = {
  name: 'oauth',
  title: 'OAuth: userinfo, the refresh_token grant and the client_credentials grant on the memory, Redis and PostgreSQL stores',
  notes: [
    'Each store has its own server process: Express 5 + `courierPlatform({ courier: false, quota: false, oauth })` with one confidential client and one RS256 signing key made at set-up. The client is configured with its plain secret (hashed with scrypt N=16384 at start-up); every token request authenticates it exactly as the token endpoint does: a secret the process verified in the last 5 minutes needs neither scrypt nor the brute-force counters, and the client record is re-read at most every 5 s (docs/oauth.md). Redis: ioredis, one connection. PostgreSQL: pg.Pool (default size 10).',
    'Set-up walks authorize → consent → token over HTTP for one grant per connection plus one (scope `openid profile offline_access`, one user each).',
    'userinfo: GET /oauth/userinfo with the spare grant\'s access token (shared by every connection), loaded by autocannon.',
    'refresh: POST /oauth/token `grant_type=refresh_token` with client_secret_basic. Each call rotates the refresh token and reusing an old one revokes the grant, so each of the N virtual connections chains its own grant: the runner\'s own keep-alive loop (`chainedLoad` in lib/load.ts; autocannon 9 resets a connection\'s context before every request of a one-request list) sends the newest refresh token it got. Its latency is measured with hrtime, not rounded to whole ms. Every answer also carries a new id_token (RS256 signature).',
    'client_credentials: POST /oauth/token `grant_type=client_credentials` with client_secret_basic (the same client, its `grants` include client_credentials; no scope asked, so it gets every scope it may use without a user). Each call saves a new access token and answers it alone (no refresh token, no id_token); nothing rotates, so the same request is replayed and autocannon loads it.',
  ],
  singleShare: 0.4,

  setup(options: MeasureOptions) {
    return withServerRun('oauth', async ({ token, schema, stores, key, servers, teardown }) => {
      const started = await Promise.all(
        STORES.map((kind) =>
          startServer(`oauth-${kind}`, 'oauth.ts', {
            BENCH_STORE: kind,
            BENCH_SIGNING_KEY: key,
            BENCH_REDIS_URL: REDIS_URL,
            BENCH_REDIS_PREFIX: `${token}:`,
            BENCH_REDIS_NAME: `${token}_oauth`,
            BENCH_DATABASE_URL: DATABASE_URL,
            BENCH_PG_SCHEMA: schema,
          }),
        ),
      );
      servers.push(...started);

      const runs: StoreRun[] = [];
      for (const [i, kind] of STORES.entries()) {
        const server = started[i]!;
        // Grant `connections` is the spare one: userinfo's token, never refreshed, so no chain can revoke it.
        const users = Array.from({ length: options.connections + 1 }, (_, n) => `u${n}`);
        const grants = await mapLimit(users, 4, (user) => authorizeGrant(server.url, user));
        const states = grants.slice(0, options.connections).map((grant): RefreshState => {
          if (!grant.refresh_token) throw new Error(`oauth-${kind}: the grant has no refresh token (scope ${grant.scope})`);
          return { token: grant.refresh_token };
        });
        const chains = states.map(refreshChain);
        const spare = grants[options.connections]!;
        runs.push({
          kind,
          server,
          chains,
          userinfo: {
            id: `userinfo-${kind}`,
            pid: server.pid,
            label: `userinfo, ${STORE_LABEL[kind]}`,
            url: `${server.url}/oauth/userinfo`,
            method: 'GET',
            headers: { authorization: `Bearer ${spare.access_token}` },
            verify: (body) => body.startsWith(`{"sub":"bench-u${options.connections}"`),
          },
          clientCredentials: {
            id: `client-credentials-${kind}`,
            pid: server.pid,
            label: `client_credentials grant, ${STORE_LABEL[kind]}`,
            url: `${server.url}/oauth/token`,
            method: 'POST',
            headers: { authorization: clientBasicAuth, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
            verify: isClientToken,
          },
          refresh: {
            id: `refresh-${kind}`,
            pid: server.pid,
            label: `refresh_token grant, ${STORE_LABEL[kind]}`,
            url: `${server.url}/oauth/token`,
            method: 'POST',
            headers: { authorization: clientBasicAuth, 'content-type': 'application/x-www-form-urlencoded' },
            verify: () => true,
            chain: (connection) => {
              const chain = chains[connection];
              if (!chain) throw new Error(`refresh-${kind}: no grant for connection ${connection}`);
              return chain;
            },
          },
        });
        process.stderr.write(`  oauth-${kind}: ${grants.length} grants through authorize → consent → token\n`);
      }

      return {
        targets: [...runs.map((run) => run.userinfo), ...runs.map((run) => run.refresh), ...runs.map((run) => run.clientCredentials)],
        teardown,
        async probe(summary): Promise<ProbeResult> {
          const ratios: Ratio[] = [];
          const rows: string[][] = [];
          const warnings: string[] = [];
          const data: Record<string, unknown> = {};
          for (const run of runs) {
            const probe = { store: run.kind, serverUrl: run.server.url, redisName: `${token}_oauth`, admin: stores.redis };
            const userinfo = await measureRoundTrips({ ...probe, target: run.userinfo, ...PROBE_USERINFO });
            // The rounds are over: the first few chains are free for the probe.
            const connections = Math.min(PROBE_REFRESH.connections, run.chains.length);
            const refresh = await measureRoundTrips({ ...probe, target: run.refresh, requests: PROBE_REFRESH.requests, connections });
            const clientCredentials = await measureRoundTrips({ ...probe, target: run.clientCredentials, ...PROBE_CLIENT_CREDENTIALS });
            data[run.kind] = { userinfo, refresh, clientCredentials };
            const label = STORE_LABEL[run.kind];
            const probeErrors = userinfo.errors + refresh.errors + clientCredentials.errors;
            // Each process re-reads a client record at most every 5 s (docs/operator.md): over the
            // probe that is a fraction of a percent on top of the per-call work, hence the 1 %.
            ratios.push(
              {
                label: `${label}: store round trips per userinfo call`,
                value: userinfo.perCall,
                unit: 'round trips',
                goal: '≤ 1 (+1 % client re-reads)',
                pass: userinfo.perCall <= 1.01 && userinfo.errors === 0 && userinfo.consistent,
              },
              {
                // Two before the answer (find, rotate); the third confirms the rotation once the
                // answer was written (docs/oauth.md#tokens), off the request path.
                label: `${label}: store round trips per refresh_token grant`,
                value: refresh.perCall,
                unit: 'round trips',
                goal: '≤ 2 before the answer + 1 after it (+1 % client re-reads)',
                pass: refresh.perCall <= 3.03 && refresh.errors === 0 && refresh.consistent,
              },
              {
                // Saving the new token; the client record and its verified secret come from the process's cache.
                label: `${label}: store round trips per client_credentials grant`,
                value: clientCredentials.perCall,
                unit: 'round trips',
                goal: '≤ 1 (+1 % client re-reads)',
                pass: clientCredentials.perCall <= 1.01 && clientCredentials.errors === 0 && clientCredentials.consistent,
              },
            );
            const u = summaryOf(summary, run.userinfo.id);
            const r = summaryOf(summary, run.refresh.id);
            const cc = summaryOf(summary, run.clientCredentials.id);
            const errors = u.errors + r.errors + cc.errors + probeErrors;
            rows.push([
              label,
              fixed(u.rps, 0),
              fixed(u.p50, 0),
              fixed(u.p99, 0),
              fixed(r.rps, 0),
              fixed(r.p50, 0),
              fixed(r.p99, 0),
              fixed(cc.rps, 0),
              fixed(cc.p99, 0),
              userinfo.detail,
              refresh.detail,
              clientCredentials.detail,
              errors > 0 ? `**${errors}** ⚠` : '0',
            ]);
            for (const [what, counted] of [['userinfo', userinfo], ['refresh', refresh], ['client_credentials', clientCredentials]] as const) {
              if (!counted.consistent) {
                warnings.push(`⚠ ${label} ${what}: INFO commandstats and MONITOR disagree (${counted.redis!.topLevel} vs ${counted.redis!.sent} top-level commands); ${counted.redis!.others} commands came from other clients.`);
              }
            }
            if (probeErrors > 0) warnings.push(`⚠ ${label}: ${probeErrors} requests of the round-trip probe failed.`);
          }
          const c = options.connections;
          return {
            ratios,
            tables: [
              table(
                [
                  'Store',
                  `userinfo req/s (${c} conn)`,
                  'p50 ms',
                  'p99 ms',
                  `refresh req/s (${c} conn)`,
                  'p50 ms',
                  'p99 ms',
                  `client_credentials req/s (${c} conn)`,
                  'p99 ms',
                  'round trips / userinfo',
                  'round trips / refresh',
                  'round trips / client_credentials',
                  'errors',
                ],
                ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l', 'l', 'r'],
                rows,
              ),
            ],
            notes: [
              `Round trips (after the rounds, nothing else of the bench running; ${PROBE_USERINFO.requests} userinfo calls on ${PROBE_USERINFO.connections} connections, ${PROBE_REFRESH.requests} refreshes on ${PROBE_REFRESH.connections} and ${PROBE_CLIENT_CREDENTIALS.requests} client_credentials grants on ${PROBE_CLIENT_CREDENTIALS.connections}, per store): Redis, the commands the server received on the child's connection (MONITOR, by client address), then the server's \`INFO commandstats\` delta per call, which also counts the commands Lua scripts run (in Lua) and must equal the first figure once those and other clients' commands are taken out. PostgreSQL: statements the child's pool sent (a counter around each pooled connection's \`query\`; pg_stat_statements is not loaded on this server). Memory: none, by construction.`,
              ...warnings,
            ],
            data,
          };
        },
      };
    });
  },

  ratios() {
    // Throughput has no target; the round-trip checks come from the probe.
    return [];
  },
};
