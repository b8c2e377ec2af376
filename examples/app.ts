/**
 * The example host as an Express app: an ordinary site that becomes an open platform with one
 * app.use(). It brings what a host brings: a login page, a user, its own OpenAPI route and a
 * relying party. Without COURIER_UPSTREAM_URL it starts the bundled sandbox. `express-server.ts`
 * listens with it; tests build it in process.
 */
import express, { type Express } from 'express';
import { z } from 'zod';
import { courierPlatform, type ExpressPlatform } from 'courier-platform/express';
import { startSandbox } from 'courier-platform/sandbox';
import type { ExampleConfig } from './config.js';
import { formTokens } from './forms.js';
import { loginRoutes, type Login } from './login.js';
import { errorPages, notFound, renderPage, securityHeaders } from './pages.js';
import { apiReferenceRoutes } from './api-reference.js';
import { relyingPartyRoutes } from './relying-party.js';
import { createSessions, signedCookies } from './session.js';
import { createStores, type ExampleStores } from './stores.js';

export interface ExampleApp {
  app: Express;
  platform: ExpressPlatform;
  /** Where courier calls go: COURIER_UPSTREAM_URL or the bundled sandbox. */
  upstreamUrl: string;
  usesSandbox: boolean;
  /** Stops the sandbox and closes the stores. */
  close(): Promise<void>;
}

/** The one `app.use()` this example is about: courier proxy, OAuth server, quotas and, with ADMIN_TOKEN, the admin API. */
function mountablePlatform(config: ExampleConfig, stores: ExampleStores, login: Login, upstreamUrl: string): ExpressPlatform {
  return courierPlatform({
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
          grants: ['authorization_code', 'refresh_token', 'client_credentials'],
        },
      ],
    },
    quota: {
      store: stores.quota,
      defaults: config.quota,
    },
    // The operator's API (docs/operator.md), only with ADMIN_TOKEN set.
    admin: config.adminToken ? { token: config.adminToken } : false,
    // Every level on the console, one line each: info carries the admin API's changes
    // (docs/operator.md#the-audit-lines), which the default (warnings and errors) leaves out.
    logger: console,
  });
}

/** `stores` defaults to the ones `config.store` names. */
export async function createExampleApp(config: ExampleConfig, stores: ExampleStores = createStores(config)): Promise<ExampleApp> {
  const secure = config.publicUrl.startsWith('https://');
  const publicOrigin = new URL(config.publicUrl).origin;
  const login = loginRoutes({
    publicUrl: config.publicUrl,
    sessions: createSessions(stores.sessions, secure),
    tokens: formTokens(config.sessionSecret),
    secure,
    store: stores.oauth,
  });

  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  let platform: ExpressPlatform;
  let upstreamUrl: string;
  try {
    sandbox = config.courierUpstreamUrl
      ? undefined
      : await startSandbox({
          apps: { [config.courierAppId]: config.courierAppSecret },
          // Pre-orders turn into orders on their own, so the create -> query flow shows both states.
          autoConfirmPreOrdersAfterMs: 5_000,
        });
    upstreamUrl = config.courierUpstreamUrl ?? sandbox!.url;
    platform = mountablePlatform(config, stores, login, upstreamUrl);
  } catch (error) {
    // A configuration the platform refuses, or no port for the sandbox: nothing started may keep the process alive.
    await Promise.allSettled([sandbox?.close(), stores.close()]);
    throw error;
  }
  const app = express();
  app.disable('x-powered-by');
  app.use(platform);
  // The platform's pages send their own headers; these are for the host's pages below.
  app.use(securityHeaders(publicOrigin));
  app.use(login.router);
  app.use(relyingPartyRoutes(config, signedCookies(config.sessionSecret, secure)));
  app.use(apiReferenceRoutes('/openapi/v1/openapi.json'));

  // The host's own OpenAPI endpoint, guarded by the quota: the caller's application comes from the access token.
  const pong = z.object({ code: z.literal(0), message: z.string(), data: z.object({ pong: z.literal(true), clientId: z.string(), sub: z.string().optional() }) });
  const pingDoc = { method: 'GET', operationId: 'ping', summary: 'Who is calling: the application and the user of the access token', responses: { 200: { description: 'Pong', schema: pong } } } as const;
  app.get('/openapi/v1/ping', platform.quota('/openapi/v1/ping', pingDoc), (req, res) => {
    res.json({ code: 0, message: 'ok', data: { pong: true, clientId: req.platformAuth?.clientId, sub: req.platformAuth?.sub } });
  });

  // The host's own pages keep working next to the platform.
  app.get('/', async (req, res) => {
    res.type('html').send(
      renderPage(
        'courier-platform example',
        `<h1>courier-platform example</h1>${await login.status(req)}<ul>
<li><a href="/rp/start">Sign in with the platform</a> as a relying party would (demo / demo)</li>
<li><a href="/courier/get_address">GET /courier/get_address</a> through the courier proxy</li>
<li><a href="/api-docs">API reference</a> of every endpoint, from <a href="/openapi/v1/openapi.json">the OpenAPI document</a></li>
<li><a href="/oauth/.well-known/openid-configuration">OpenID configuration</a></li></ul>`,
      ),
    );
  });

  app.use(notFound);
  app.use(errorPages);

  return {
    app,
    platform,
    upstreamUrl,
    usesSandbox: sandbox !== undefined,
    async close() {
      await Promise.allSettled([sandbox?.close(), stores.close()]);
    },
  };
}
