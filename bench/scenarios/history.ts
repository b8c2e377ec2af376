/**
 * The guard with the usage history on (the default) and off, on the memory and the Redis quota
 * store: what counting every call for the history costs the guarded route. Each pair is a pair of
 * neighbours, so the ratio is paired round by round; a head-to-head of fresh servers checks it.
 */
import { headToHead, type Contender, type HeadToHead } from '../lib/head-to-head.js';
import { authorizeGrant } from '../lib/oauth.js';
import { isPingBody, PING_PATH } from '../lib/ping.js';
import { fixed, pairedRatio, table } from '../lib/report.js';
import type { ProbeResult, Scenario } from '../lib/scenario.js';
import { withServerRun } from '../lib/server-run.js';
import { startServer } from '../lib/servers.js';
import { REDIS_URL } from '../lib/stores.js';

const LIMIT = 1_000_000_000;
const GOAL = 0.97;

interface Spec {
  id: string;
  label: string;
  store: 'memory' | 'redis';
  history: boolean;
}

const SPECS: Spec[] = [
  { id: 'memory-off', label: 'guard, memory, history off', store: 'memory', history: false },
  { id: 'memory-on', label: 'guard, memory, history on', store: 'memory', history: true },
  { id: 'redis-off', label: 'guard, Redis, history off', store: 'redis', history: false },
  { id: 'redis-on', label: 'guard, Redis, history on', store: 'redis', history: true },
];

export const historyScenario: Scenario = {
  name: 'history',
  title: 'Quota guard (GET /openapi/v1/ping) with the usage history on vs off',
  notes: [
    `The quota scenario's guard server (\`servers/quota-guard.ts\`): Express 5, a Bearer token from its own OAuth server, every limit ${LIMIT.toLocaleString('en-US')}; \`quota.history: false\` for "off", the default (flushed every 5 s) for "on". Every call counts one client and path, so the history holds one row per flush.`,
  ],

  setup(options) {
    return withServerRun('history', async ({ token, key, servers, teardown }) => {
      const env = { BENCH_QUOTA_LIMIT: String(LIMIT), BENCH_SIGNING_KEY: key, BENCH_REDIS_URL: REDIS_URL, BENCH_PREFIX: token };
      const launch = async (spec: Spec, name: string): Promise<Contender> => {
        const server = await startServer(name, 'quota-guard.ts', {
          ...env,
          BENCH_REDIS_NAME: `${token}_${name}`,
          BENCH_QUOTA_STORE: spec.store,
          ...(spec.history ? {} : { BENCH_QUOTA_HISTORY: 'off' }),
        });
        servers.push(server);
        const headers = { authorization: `Bearer ${(await authorizeGrant(server.url, 'quota-app', 'openid')).access_token}` };
        return { server, target: { id: spec.id, label: spec.label, pid: server.pid, url: `${server.url}${PING_PATH}`, method: 'GET', headers, verify: isPingBody } };
      };
      const started: Contender[] = [];
      for (const spec of SPECS) started.push(await launch(spec, spec.id));
      const specOf = (id: string) => SPECS.find((spec) => spec.id === id)!;
      const freshPair = async (a: string, b: string): Promise<HeadToHead> => {
        const pair = await Promise.all([launch(specOf(a), `${a}-h2h-a`), launch(specOf(b), `${b}-h2h-b`)]);
        try {
          return await headToHead(pair[0], pair[1], { rounds: options.rounds, durationS: options.duration, connections: options.connections });
        } finally {
          await Promise.all(pair.map((contender) => contender.server.stop()));
        }
      };

      return {
        targets: started.map((contender) => contender.target),
        teardown,
        async probe(): Promise<ProbeResult> {
          const pairs: [string, HeadToHead][] = [
            ['memory: history on ÷ off', await freshPair('memory-off', 'memory-on')],
            ['Redis: history on ÷ off', await freshPair('redis-off', 'redis-on')],
          ];
          return {
            ratios: pairs.map(([label, pair]) => ({ label: `head-to-head, ${label}`, value: pair.median, unit: '', goal: `≥ ${GOAL}`, pass: pair.median >= GOAL })),
            tables: [
              table(
                ['Head-to-head pair', 'median', 'min', 'max', 'per round'],
                ['l', 'r', 'r', 'r', 'l'],
                pairs.map(([label, pair]) => [label, fixed(pair.median, 3), fixed(Math.min(...pair.ratios), 3), fixed(Math.max(...pair.ratios), 3), pair.ratios.map((r) => fixed(r, 2)).join(' ')]),
              ),
            ],
            notes: ['Head-to-head (after the rounds): two fresh servers loaded at the same time, as in the quota scenario (`lib/head-to-head.ts`).'],
            data: { headToHead: Object.fromEntries(pairs) },
          };
        },
      };
    });
  },

  ratios(summary) {
    return (['memory', 'redis'] as const).map((store) => {
      const value = pairedRatio(summary, `${store}-on`, `${store}-off`);
      return { label: `guard (${store}) with the history ÷ without, req/s (paired)`, value, unit: '', goal: `≥ ${GOAL}`, pass: value >= GOAL };
    });
  },
};
