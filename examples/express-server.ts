/**
 * The example behind `npm start`: an ordinary Express app that becomes an open platform with one
 * app.use(). It brings what a host brings (a login page, users, a relying party) and reads the
 * environment of CONTRACT section 6. Without COURIER_UPSTREAM_URL it starts the bundled sandbox.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { courierPlatform } from 'courier-platform/express';
import { startSandbox } from 'courier-platform/sandbox';
import { readConfig } from './config.js';
import { loginRoutes } from './login.js';
import { relyingPartyRoutes } from './relying-party.js';
import { signedCookies } from './session.js';
import { createStores } from './stores.js';

const config = readConfig();
const stores = createStores(config);
const cookies = signedCookies(config.sessionSecret);
const login = loginRoutes(cookies, config.publicUrl);

const sandbox = config.courierUpstreamUrl
  ? undefined
  : await startSandbox({
      apps: { [config.courierAppId]: config.courierAppSecret },
      // Pre-orders turn into orders on their own, so the create -> query flow shows both states.
      autoConfirmPreOrdersAfterMs: 5_000,
    });
const upstreamUrl = config.courierUpstreamUrl ?? sandbox!.url;

const platform = courierPlatform({
  courier: {
    upstreamUrl,
    credentials: { appId: config.courierAppId, appSecret: config.courierAppSecret },
  },
  oauth: {
    publicUrl: config.publicUrl,
    authenticate: login.authenticate,
    loginUrl: '/login',
    store: stores.oauth,
    ...(config.signingKey ? { signingKeys: [config.signingKey] } : {}),
    clients: [
      {
        id: config.demoClientId,
        name: 'Demo relying party',
        secret: config.demoClientSecret,
        redirectUris: [config.demoRedirectUri],
      },
    ],
  },
  quota: {
    store: stores.quota,
    defaults: config.quota,
  },
});

const app = express();
app.use(platform);
app.use(login.router);
app.use(
  relyingPartyRoutes(config, cookies, async (accessToken) => {
    const response = await fetch(`${config.publicUrl}/openapi/v1/get_quota?api_path=/openapi/v1/ping`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    return response.headers.get('content-type')?.includes('json') ? response.json() : { status: response.status };
  }),
);

// The host's own OpenAPI endpoint, guarded by the quota: the caller's application comes from the access token.
app.get('/openapi/v1/ping', platform.quota(), (req, res) => {
  res.json({ code: 0, message: 'ok', data: { pong: true, clientId: req.platformAuth?.clientId, sub: req.platformAuth?.sub } });
});

// The host's own routes keep working next to the platform.
app.get('/', (_req, res) => {
  res.type('html').send(`<!doctype html><meta charset="utf-8"><title>courier-platform example</title>
<h1>courier-platform example</h1><ul>
<li><a href="/rp/start">Sign in with the platform</a> (demo / demo)</li>
<li><a href="/courier/get_address">GET /courier/get_address</a></li>
<li><a href="/oauth/.well-known/openid-configuration">OpenID configuration</a></li></ul>`);
});

await platform.platform.ready();
const server = app.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  const base = config.publicUrl;
  console.log(`courier-platform example listening on http://${config.host}:${port} (public URL ${base})`);
  console.log(`  sign in:         ${base}/rp/start   (demo / demo; builds the authorization URL with state, nonce and PKCE)`);
  // Only the well-known demo secret is printed; a secret from the environment stays out of the console.
  const secret = config.demoClientSecret === 'demo-secret' ? 'demo-secret' : '(DEMO_CLIENT_SECRET)';
  console.log(`  authorize:       ${base}/oauth/authorize   client ${config.demoClientId} / ${secret}, redirect ${config.demoRedirectUri}`);
  console.log(`  discovery:       ${base}/oauth/.well-known/openid-configuration`);
  console.log(`  courier proxy:   ${base}/courier/<operation>   e.g. curl ${base}/courier/get_address`);
  console.log(`  openapi:         ${base}/openapi/v1/ping (Bearer, quota ${config.quota.minute}/min ${config.quota.day}/day ${config.quota.month || 'unlimited'}/month)`);
  console.log(`                   ${base}/openapi/v1/get_quota?api_path=/openapi/v1/ping`);
  console.log(`  upstream:        ${upstreamUrl}${sandbox ? '   (bundled sandbox)' : ''}`);
  console.log(`  store:           ${config.store}`);
});

function shutdown() {
  server.close();
  server.closeAllConnections();
  void sandbox?.close();
  void stores.close();
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
