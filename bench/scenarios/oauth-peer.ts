/**
 * courier-platform's OAuth server against oidc-provider (panva), both on memory stores and the
 * same RS256 key: the refresh_token grant (rotating, with an id_token) and userinfo. Each pair of
 * targets are neighbours, so their ratio is paired round by round (`pairedRatio`).
 */
import { authorizeGrant, clientBasicAuth, mapLimit, type TokenSet } from '../lib/oauth.js';
import { authorizePeerGrant } from '../lib/oidc-peer.js';
import { fixed, pairedCpuRatio, pairedRatio, summaryOf, table } from '../lib/report.js';
import type { Ratio, RequestChain, Scenario, Target } from '../lib/scenario.js';
import { withServerRun } from '../lib/server-run.js';
import { startServer, type ServerProcess } from '../lib/servers.js';

const REFRESH_GOAL = 1.5;
const USERINFO_GOAL = 1.0;

/**
 * The servers compared, with the paths each gives the same endpoints. courier-platform runs on
 * Express 5 and on Koa 3, the host oidc-provider is built on; oidc-provider runs on its own and
 * mounted in an Express 5 app, as an Express team would run it. Each courier-platform server has
 * its peer on the same host as its neighbour in every round.
 */
const SERVERS = [
  { id: 'platform', label: 'courier-platform on Express 5', entry: 'oauth.ts', env: { BENCH_STORE: 'memory' }, authorize: authorizeGrant, token: '/oauth/token', userinfo: '/oauth/userinfo' },
  { id: 'oidc-provider-express', label: 'oidc-provider mounted in Express 5', entry: 'oidc-provider.ts', env: { BENCH_HOST: 'express' }, authorize: authorizePeerGrant, token: '/token', userinfo: '/me' },
  { id: 'oidc-provider', label: 'oidc-provider', entry: 'oidc-provider.ts', env: {}, authorize: authorizePeerGrant, token: '/token', userinfo: '/me' },
  { id: 'platform-koa', label: 'courier-platform on Koa 3', entry: 'oauth.ts', env: { BENCH_STORE: 'memory', BENCH_HOST: 'koa' }, authorize: authorizeGrant, token: '/oauth/token', userinfo: '/oauth/userinfo' },
] as const;

type ServerId = (typeof SERVERS)[number]['id'];
/** Each courier-platform server with the oidc-provider servers it is compared with, the one on its own host first. */
const COMPARED: readonly { platform: ServerId; peers: readonly ServerId[] }[] = [
  { platform: 'platform', peers: ['oidc-provider-express', 'oidc-provider'] },
  { platform: 'platform-koa', peers: ['oidc-provider'] },
];
const labelOf = (id: ServerId) => SERVERS.find((spec) => spec.id === id)!.label;

const refreshId = (server: ServerId) => `refresh-${server}`;
const userinfoId = (server: ServerId) => `userinfo-${server}`;

/**
 * Connection i keeps refreshing grant i with the newest refresh token. An answer counts only with
 * a new access token, refresh token and id_token: a peer that skipped one of them would not be
 * doing the same work. A failed refresh keeps the old token (a reuse after a rotation revokes the
 * grant, so that chain keeps failing, counted as errors).
 */
function refreshChain(first: string): RequestChain {
  let token = first;
  return {
    next: () => ({ body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString() }),
    answer(status, body) {
      if (status !== 200) return false;
      try {
        const tokens = JSON.parse(body) as Partial<TokenSet>;
        if (typeof tokens.refresh_token !== 'string' || typeof tokens.access_token !== 'string' || typeof tokens.id_token !== 'string') return false;
        if (tokens.refresh_token === token) return false;
        token = tokens.refresh_token;
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** The same check on both servers: the claims of the spare grant's user. */
function isUserinfoOf(sub: string): (body: string) => boolean {
  return (body) => {
    try {
      return (JSON.parse(body) as { sub?: unknown }).sub === sub;
    } catch {
      return false;
    }
  };
}

export const oauthPeerScenario: Scenario = {
  name: 'oauth-peer',
  title: 'OAuth against oidc-provider: the refresh_token grant and userinfo, both servers on memory stores and the same RS256 key',
  notes: [
    'courier-platform: the oauth scenario\'s memory server (`courierPlatform({ courier: false, quota: false, oauth })`, its in-memory OAuth store) on Express 5, and the same on Koa 3, the framework oidc-provider is built on. oidc-provider 9 on Node\'s http server and mounted in an Express 5 app (`app.use(provider.callback())`, no body parser in front), its in-memory adapter (`MemoryAdapter`) on a store of a million entries (the default store keeps 1,000, least recently used out first, and under this load forgot the userinfo token within seconds; courier-platform\'s memory store keeps every unexpired token), the same private RS256 JWK in `jwks`, opaque access tokens (its default), userinfo on. Both have one confidential client with client_secret_basic, grants authorization_code + refresh_token.',
    'Set-up walks each server\'s real HTTP flow for one grant per connection plus one, scope `openid profile offline_access`. courier-platform: authorize → consent → token. oidc-provider: authorize with `prompt=consent` (it drops offline_access without it) → an `interactions.url` handler that logs the user in and grants the asked scope (`provider.interactionFinished`) → resume → token.',
    'refresh: POST to the token endpoint, `grant_type=refresh_token`, client_secret_basic; each virtual connection chains its own grant with the runner\'s keep-alive loop (`chainedLoad`), as in the oauth scenario. Both servers rotate the refresh token on every use (oidc-provider `rotateRefreshToken: true`) and sign a new RS256 id_token into every answer; an answer counts only with a new access token, a new refresh token and an id_token.',
    'userinfo: GET with the spare grant\'s access token (shared by every connection), loaded by autocannon; an answer counts when its `sub` is that grant\'s user.',
    'Differences: courier-platform verifies the client secret with scrypt (cached for 5 minutes after a success, docs/oauth.md), oidc-provider compares the plain secret. oidc-provider prints "Unsupported runtime" on Node 20 (it supports Node 22 and later) and notices about its default TTLs; they are left as they are. The id_tokens differ in their optional claims (oidc-provider leaves profile claims to userinfo).',
  ],
  singleShare: 0.4,

  setup(options) {
    return withServerRun('oauthpeer', async ({ key, servers, teardown }) => {
      const started: ServerProcess[] = await Promise.all(
        SERVERS.map((spec) => startServer(`oauth-peer-${spec.id}`, spec.entry, { ...spec.env, BENCH_SIGNING_KEY: key })),
      );
      servers.push(...started);

      const refresh: Target[] = [];
      const userinfo: Target[] = [];
      for (const [i, spec] of SERVERS.entries()) {
        const server = started[i]!;
        // Grant `connections` is the spare one: userinfo's token, never refreshed, so no chain can revoke it.
        const users = Array.from({ length: options.connections + 1 }, (_, n) => `u${n}`);
        const grants = await mapLimit(users, 4, (user) => spec.authorize(server.url, user));
        const chains = grants.slice(0, options.connections).map((grant) => {
          if (!grant.refresh_token) throw new Error(`${spec.label}: the grant has no refresh token (scope ${grant.scope})`);
          return refreshChain(grant.refresh_token);
        });
        userinfo.push({
          id: userinfoId(spec.id),
          pid: server.pid,
          label: `userinfo, ${spec.label}`,
          url: `${server.url}${spec.userinfo}`,
          method: 'GET',
          headers: { authorization: `Bearer ${grants[options.connections]!.access_token}` },
          verify: isUserinfoOf(`bench-u${options.connections}`),
        });
        refresh.push({
          id: refreshId(spec.id),
          pid: server.pid,
          label: `refresh_token grant, ${spec.label}`,
          url: `${server.url}${spec.token}`,
          method: 'POST',
          headers: { authorization: clientBasicAuth, 'content-type': 'application/x-www-form-urlencoded' },
          // The chain checks every answer.
          verify: () => true,
          chain: (connection) => {
            const chain = chains[connection];
            if (!chain) throw new Error(`${refreshId(spec.id)}: no grant for connection ${connection}`);
            return chain;
          },
        });
        process.stderr.write(`  oauth-peer ${spec.id}: ${grants.length} grants through its authorization code flow\n`);
      }

      return {
        targets: [...refresh, ...userinfo],
        teardown,
        async probe(summary) {
          const c = options.connections;
          const rows = SERVERS.map((spec) => {
            const r = summaryOf(summary, refreshId(spec.id));
            const u = summaryOf(summary, userinfoId(spec.id));
            const errors = r.errors + u.errors;
            return [spec.label, fixed(r.rps, 0), fixed(r.p50, 1), fixed(r.p99, 1), fixed(u.rps, 0), fixed(u.p50, 0), fixed(u.p99, 0), errors > 0 ? `**${errors}** ⚠` : '0'];
          });
          const perCpu = (kind: (server: ServerId) => string, platform: ServerId, peer: ServerId) => fixed(pairedCpuRatio(summary, kind(platform), kind(peer)), 2);
          return {
            ratios: [],
            notes: [
              ...COMPARED.flatMap(({ platform, peers }) =>
                peers.map(
                  (peer) =>
                    `Per CPU second (the servers' CPU time per request, paired round by round), ${labelOf(platform)} ÷ ${labelOf(peer)}: refresh ${perCpu(refreshId, platform, peer)} ×, userinfo ${perCpu(userinfoId, platform, peer)} ×.`,
                ),
              ),
              "The servers' CPU includes the RS256 signature, which both run on libuv's thread pool (WebCrypto); the main thread column shows what is left on the event loop.",
            ],
            tables: [
              table(
                ['Server', `refresh req/s (${c} conn)`, 'p50 ms', 'p99 ms', `userinfo req/s (${c} conn)`, 'p50 ms', 'p99 ms', 'errors'],
                ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
                rows,
              ),
            ],
          };
        },
      };
    });
  },

  ratios(summary): Ratio[] {
    const errorFree = (...ids: string[]) => ids.every((id) => summaryOf(summary, id).errors === 0);
    return COMPARED.flatMap(({ platform, peers }) =>
      peers.flatMap((peer) => {
        const refresh = pairedRatio(summary, refreshId(platform), refreshId(peer));
        const userinfo = pairedRatio(summary, userinfoId(platform), userinfoId(peer));
        return [
          {
            label: `refresh_token grant req/s, ${labelOf(platform)} ÷ ${labelOf(peer)}`,
            value: refresh,
            unit: '',
            goal: `≥ ${REFRESH_GOAL}`,
            pass: refresh >= REFRESH_GOAL && errorFree(refreshId(platform), refreshId(peer)),
          },
          {
            label: `userinfo req/s, ${labelOf(platform)} ÷ ${labelOf(peer)}`,
            value: userinfo,
            unit: '',
            goal: `≥ ${USERINFO_GOAL}`,
            pass: userinfo >= USERINFO_GOAL && errorFree(userinfoId(platform), userinfoId(peer)),
          },
        ];
      }),
    );
  },
};
