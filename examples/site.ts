/**
 * The example's host-neutral whole: an ordinary site (a login page, a user, its own OpenAPI
 * route, a relying party, an API reference) and the options of the one platform it mounts.
 * Each file in hosts/ mounts this on its framework; without COURIER_UPSTREAM_URL the bundled
 * sandbox is started here.
 */
import { z } from 'zod';
import type { CourierPlatformOptions, QuotaIdentity } from 'courier-platform';
import { startSandbox } from 'courier-platform/sandbox';
import { createApiReference } from './api-reference.js';
import type { ExampleConfig } from './config.js';
import { formTokens } from './forms.js';
import { answer, type SiteAnswer, type SiteRequest } from './http.js';
import { createLogin } from './login.js';
import { errorPage, notFoundPage, page, securityHeaders } from './pages.js';
import { createRelyingParty } from './relying-party.js';
import { createSessions, signedCookies } from './session.js';
import { createStores, type ExampleStores } from './stores.js';

/** The host's own OpenAPI route, guarded by the quota: the caller's application comes from the access token. */
export const PING_PATH = '/openapi/v1/ping';
const pong = z.object({ code: z.literal(0), message: z.string(), data: z.object({ pong: z.literal(true), clientId: z.string(), sub: z.string().optional() }) });
export const PING_DOC = {
  method: 'GET',
  operationId: 'ping',
  summary: 'Who is calling: the application and the user of the access token',
  responses: { 200: { description: 'Pong', schema: pong } },
} as const;

/** One of the host's pages: every host mounts each with its own router. */
export interface SiteRoute {
  method: 'GET' | 'POST';
  path: string;
  handle(request: SiteRequest): Promise<SiteAnswer>;
}

export interface Site {
  config: ExampleConfig;
  /** The host's pages: start page, login, logout, the relying party, the API reference. */
  routes: SiteRoute[];
  /** The platform's options, with `authenticate` reading the sign-in session from the host's request. */
  platformOptions<Req>(cookieOf: (request: Req) => string | undefined): CourierPlatformOptions<Req>;
  /** GET /openapi/v1/ping, once the quota guard let the call through. */
  ping(identity: QuotaIdentity | undefined): SiteAnswer;
  /** The page for a path no route answers. */
  notFound(): SiteAnswer;
  /** The page for an error a route threw; the log gets the error. */
  errorPage(method: string, path: string, error: unknown): SiteAnswer;
  /** Where courier calls go: COURIER_UPSTREAM_URL or the bundled sandbox. */
  upstreamUrl: string;
  usesSandbox: boolean;
  /** Stops the sandbox and closes the stores. */
  close(): Promise<void>;
}

/** `stores` defaults to the ones `config.store` names. */
export async function createSite(config: ExampleConfig, stores: ExampleStores = createStores(config)): Promise<Site> {
  const secure = config.publicUrl.startsWith('https://');
  const login = createLogin({
    publicUrl: config.publicUrl,
    sessions: createSessions(stores.sessions, secure),
    tokens: formTokens(config.sessionSecret),
    secure,
    store: stores.oauth,
  });
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  try {
    sandbox = config.courierUpstreamUrl
      ? undefined
      : await startSandbox({
          apps: { [config.courierAppId]: config.courierAppSecret },
          // Pre-orders turn into orders on their own, so the create -> query flow shows both states.
          autoConfirmPreOrdersAfterMs: 5_000,
        });
  } catch (error) {
    // No port for the sandbox: nothing started may keep the process alive.
    await stores.close();
    throw error;
  }
  const upstreamUrl = config.courierUpstreamUrl ?? sandbox!.url;
  const relyingParty = createRelyingParty(config, signedCookies(config.sessionSecret, secure));
  const apiReference = createApiReference('/openapi/v1/openapi.json');
  // The platform's pages send their own headers; these are for the host's pages (a page may narrow one, as /api-docs does its CSP).
  const headers = securityHeaders(new URL(config.publicUrl).origin);
  const secured = (page: SiteAnswer): SiteAnswer => ({ ...page, headers: { ...headers, ...page.headers } });
  const route = (method: SiteRoute['method'], path: string, handle: (request: SiteRequest) => Promise<SiteAnswer> | SiteAnswer): SiteRoute => ({
    method,
    path,
    handle: async (request) => secured(await handle(request)),
  });
  const home = async (request: SiteRequest) =>
    page(
      200,
      'courier-platform example',
      `<h1>courier-platform example</h1>${await login.status(request.header('cookie'))}<ul>
<li><a href="/rp/start">Sign in with the platform</a> as a relying party would (demo / demo)</li>
<li><a href="/courier/get_address">GET /courier/get_address</a> through the courier proxy</li>
<li><a href="/api-docs">API reference</a> of every endpoint, from <a href="/openapi/v1/openapi.json">the OpenAPI document</a></li>
<li><a href="/oauth/.well-known/openid-configuration">OpenID configuration</a></li></ul>`,
    );

  return {
    config,
    routes: [
      route('GET', '/', home),
      route('GET', '/login', login.form),
      route('POST', '/login', login.signIn),
      route('POST', '/logout', login.signOut),
      route('GET', '/rp/start', relyingParty.start),
      route('GET', '/callback', relyingParty.callback),
      route('GET', '/api-docs', apiReference.page),
      route('GET', '/api-docs/init.js', apiReference.init),
      ...apiReference.assets.map((name) => route('GET', `/api-docs/assets/${name}`, () => apiReference.asset(name))),
    ],
    // The one mount this example is about: courier proxy, OAuth server, quotas and, with ADMIN_TOKEN, the admin API.
    platformOptions: (cookieOf) => ({
      courier: { upstreamUrl, credentials: { appId: config.courierAppId, appSecret: config.courierAppSecret } },
      oauth: {
        publicUrl: config.publicUrl,
        authenticate: (request) => login.authenticate(cookieOf(request)),
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
      quota: { store: stores.quota, defaults: config.quota },
      // The operator's API (docs/operator.md), only with ADMIN_TOKEN set.
      admin: config.adminToken ? { token: config.adminToken } : false,
      // Every level on the console, one line each: info carries the admin API's changes
      // (docs/operator.md#the-audit-lines), which the default (warnings and errors) leaves out.
      logger: console,
    }),
    ping: (identity) =>
      answer(200, JSON.stringify({ code: 0, message: 'ok', data: { pong: true, clientId: identity?.clientId, sub: identity?.sub } }), {
        'content-type': 'application/json; charset=utf-8',
      }),
    notFound: () => secured(notFoundPage()),
    errorPage: (method, path, error) => secured(errorPage(method, path, error)),
    upstreamUrl,
    usesSandbox: sandbox !== undefined,
    async close() {
      await Promise.allSettled([sandbox?.close(), stores.close()]);
    },
  };
}
