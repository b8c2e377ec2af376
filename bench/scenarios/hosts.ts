/**
 * The quota guard on every host (Fastify, Hono, Express, Connect, Koa), each against the same host
 * bare: what the guard keeps of its host's throughput, paired round by round and measured
 * head-to-head (two servers loaded at once).
 */
import { headToHead, type Contender, type HeadToHead } from '../lib/head-to-head.js';
import { authorizeGrant } from '../lib/oauth.js';
import { isPingBody, PING_PATH } from '../lib/ping.js';
import { fixed, pairedCpuRatio, pairedRatio, table } from '../lib/report.js';
import type { Scenario } from '../lib/scenario.js';
import { withServerRun } from '../lib/server-run.js';
import { startServer } from '../lib/servers.js';

export const LIMIT = 1_000_000_000;
export const HOSTS = [
  { host: 'fastify', label: 'Fastify 5' },
  { host: 'hono', label: 'Hono 4 on @hono/node-server' },
  { host: 'express', label: 'Express 5', goal: 0.9 },
  { host: 'connect', label: 'Connect 3' },
  { host: 'koa', label: 'Koa 3' },
] as const;
/** What the guard keeps of its host's req/s at least; Express is measured as its thinnest app. */
const goalOf = (spec: (typeof HOSTS)[number]): number => ('goal' in spec ? spec.goal : 0.85);
/**
 * The Bearer token a host's target is sent: a real one, made through the OAuth flow on that
 * server, for the guard; a header of the same shape for the others, so that every request is as
 * long as the guard's.
 */
export async function hostToken(url: string, guard: string): Promise<string> {
  return guard === 'on' ? (await authorizeGrant(url, 'quota-app', 'openid')).access_token : `${'x'.repeat(16)}.${'y'.repeat(43)}`;
}
const SPECS = HOSTS.flatMap(({ host, label }) => [
  { id: `${host}-bare`, label: `bare ${label}`, host, guard: 'off' },
  { id: `${host}-headers`, label: `${label} + a hook that only sets the two RateLimit headers`, host, guard: 'headers' },
  { id: `${host}-guard`, label: `${label} + courier-platform guard, memory (3 periods)`, host, guard: 'on' },
]);

export const hostsScenario: Scenario = {
  name: 'hosts',
  title: 'Quota guard on Fastify, Hono, Express, Connect and Koa (GET /openapi/v1/ping): guard ÷ the same host bare',
  notes: [
    `Each target is its own process answering \`{"ok":true}\`: Fastify 5 (\`preHandler: platform.quota()\`) or Hono 4 on @hono/node-server (\`platform.quota()\` middleware), bare or guarded; memory stores, every limit ${LIMIT.toLocaleString('en-US')}, every call validates a Bearer token (made through authorize → consent → token on that server) and charges three periods.`,
    'The middle target of each host sets, where the guard would stand and the way its adapter does, the two headers every guarded answer must carry (`RateLimit-Policy` and `RateLimit`, three periods each): the most any guard that keeps that promise can keep of its host, before it checks a token or counts a call.',
    'Express 5, Connect 3 and Koa 3 are their thinnest apps: `app.get(path, platform.quota(), handler)` on `express()`; `app.use(path, platform.quota())` then the handler on `connect()`; on Koa one middleware that checks the path and runs `platform.quota()` before setting the body. The bare app is the same without the guard; the guarded one mounts the platform (for the OAuth flow) after the route, so nothing but the guard stands in front of it.',
  ],
  singleShare: 0.4,

  setup(options) {
    return withServerRun('hosts', async ({ key, servers, teardown }) => {
      const env = { BENCH_QUOTA_LIMIT: String(LIMIT), BENCH_SIGNING_KEY: key };
      const launch = async (spec: (typeof SPECS)[number], name: string): Promise<Contender> => {
        const server = await startServer(name, 'host-guard.ts', { ...env, BENCH_HOST: spec.host, BENCH_GUARD: spec.guard });
        servers.push(server);
        const token = await hostToken(server.url, spec.guard);
        return { server, target: { id: spec.id, label: spec.label, pid: server.pid, url: `${server.url}${PING_PATH}`, method: 'GET', headers: { authorization: `Bearer ${token}` }, verify: isPingBody } };
      };
      const started: Contender[] = [];
      for (const spec of SPECS) started.push(await launch(spec, spec.id));
      const h2h = { rounds: options.rounds, durationS: options.duration, connections: options.connections };
      const pair = async (host: string): Promise<HeadToHead> => {
        const specs = SPECS.filter((spec) => spec.host === host && spec.guard !== 'headers');
        const fresh = await Promise.all(specs.map((spec) => launch(spec, `${spec.id}-h2h`)));
        try {
          return await headToHead(fresh[0]!, fresh[1]!, h2h);
        } finally {
          await Promise.all(fresh.map((contender) => contender.server.stop()));
        }
      };
      return {
        targets: started.map((contender) => contender.target),
        teardown,
        async probe(summary) {
          const pairs: [string, HeadToHead][] = [];
          for (const { host, label } of HOSTS) pairs.push([`guard ÷ bare ${label}`, await pair(host)]);
          return {
            ratios: [],
            tables: [
              table(
                ['Head-to-head pair', 'median', 'min', 'max', 'per round'],
                ['l', 'r', 'r', 'r', 'l'],
                pairs.map(([label, result]) => [label, fixed(result.median, 3), fixed(Math.min(...result.ratios), 3), fixed(Math.max(...result.ratios), 3), result.ratios.map((r) => fixed(r, 2)).join(' ')]),
              ),
              // What the RateLimit headers (docs/quota.md#headers) cost on each host, apart from the guard's own work.
              table(
                ['Host (paired, round by round)', 'headers alone ÷ bare', 'guard ÷ bare', 'guard ÷ headers alone', 'guard ÷ bare, per CPU second', 'guard ÷ headers alone, per CPU second'],
                ['l', 'r', 'r', 'r', 'r', 'r'],
                HOSTS.map(({ host, label }) => [
                  label,
                  fixed(pairedRatio(summary, `${host}-headers`, `${host}-bare`), 3),
                  fixed(pairedRatio(summary, `${host}-guard`, `${host}-bare`), 3),
                  fixed(pairedRatio(summary, `${host}-guard`, `${host}-headers`), 3),
                  fixed(pairedCpuRatio(summary, `${host}-guard`, `${host}-bare`), 3),
                  fixed(pairedCpuRatio(summary, `${host}-guard`, `${host}-headers`), 3),
                ]),
              ),
            ],
            data: { headToHead: Object.fromEntries(pairs) },
          };
        },
      };
    });
  },

  ratios(summary) {
    return HOSTS.map((spec) => {
      const kept = pairedRatio(summary, `${spec.host}-guard`, `${spec.host}-bare`);
      const goal = goalOf(spec);
      return { label: `guard req/s ÷ bare ${spec.label} req/s`, value: kept, unit: '', goal: `≥ ${goal.toFixed(2)}`, pass: kept >= goal };
    });
  },
};
