/**
 * The peer of the oauth-peer scenario: oidc-provider (panva) on its own in-memory adapter,
 * set up like `oauth.ts`'s memory server: the bench's RS256 signing key, one confidential client
 * (client_secret_basic, authorization_code + refresh_token), refresh tokens for offline_access,
 * rotated on every use, opaque access tokens, userinfo on.
 * Its login and consent pages are replaced by one handler (`interactions.url`) that trusts the
 * bench's user header, as `oauth.ts`'s `authenticate` does, and grants the asked scope at once.
 * On Node's http server by default; `BENCH_HOST=express` mounts it in an Express 5 app.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import Provider, { type Configuration } from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import { announceReady, listenLocal, requireEnv, stopServer } from '../lib/child.js';
import { BENCH_CLIENT, USER_HEADER } from '../lib/oauth.js';

const INTERACTION_PATH = '/interaction/';

/**
 * oidc-provider's default in-memory adapter keeps 1,000 entries, least recently used out first;
 * every rotation adds two (the new access and refresh tokens), so under load it forgets live
 * tokens within seconds. The same adapter class on a store of a million entries keeps every one
 * of a run, as courier-platform's memory store keeps every unexpired token.
 */
const storage = new LRU({ maxSize: 1_000_000 });

const key = JSON.parse(requireEnv('BENCH_SIGNING_KEY')) as Record<string, unknown>;

// The issuer is the listening origin, known once listening: the provider is attached after listen().
const server = createServer();
const url = await listenLocal(server);

const configuration: Configuration = {
  clients: [
    {
      client_id: BENCH_CLIENT.id,
      client_secret: BENCH_CLIENT.secret,
      redirect_uris: [BENCH_CLIENT.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [key] },
  adapter: (model) => new MemoryAdapter(model, storage),
  scopes: ['openid', 'offline_access'],
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'] },
  cookies: { keys: ['bench-cookie-key'] },
  features: { devInteractions: { enabled: false }, userinfo: { enabled: true } },
  interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}${interaction.uid}` },
  // The defaults, stated: a refresh token for offline_access, rotated on every use like the platform's.
  issueRefreshToken: (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
  rotateRefreshToken: true,
  findAccount: (_ctx, sub) => ({
    accountId: sub,
    claims: () => {
      const name = sub.replace(/^bench-/, '');
      return { sub, name: `Bench ${name}`, preferred_username: name };
    },
  }),
};
const provider = new Provider(url, configuration);
const callback = provider.callback();

/** Logs the user of the header in and grants every scope the client asked for. */
async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const user = req.headers[USER_HEADER];
  if (typeof user !== 'string' || !/^[a-z0-9-]{1,40}$/.test(user)) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`${USER_HEADER} header missing`);
    return;
  }
  const details = await provider.interactionDetails(req, res);
  const accountId = `bench-${user}`;
  const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

function route(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (!req.url?.startsWith(INTERACTION_PATH)) return next();
  interaction(req, res).catch((error: unknown) => {
    console.error('[oidc-provider] interaction failed', error);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end();
  });
}

if (process.env.BENCH_HOST === 'express') {
  // Mounted in an Express 5 app, as oidc-provider's documentation mounts it there: the provider's
  // callback as the app's last middleware, no body parser in front of it.
  const app = express();
  app.use(route);
  app.use(callback);
  server.on('request', app);
} else {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => route(req, res, () => void callback(req, res)));
}

announceReady(url, () => stopServer(server));
