/**
 * A small relying party living in the same example: `/rp/start` builds the authorization URL
 * (state, nonce, PKCE S256) with openid-client, and `/callback` exchanges the code server-side,
 * then shows the user info. The client secret never reaches the browser.
 */
import express, { type Router } from 'express';
import * as oidc from 'openid-client';
import type { ExampleConfig } from './config.js';
import type { SignedCookies } from './session.js';

const TX_COOKIE = 'rp_tx';

interface Transaction {
  state: string;
  nonce: string;
  verifier: string;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function relyingPartyRoutes(config: ExampleConfig, cookies: SignedCookies, showQuota: (accessToken: string) => Promise<unknown>): Router {
  const router = express.Router();
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () =>
    (discovered ??= oidc
      .discovery(new URL(`${config.publicUrl}/oauth`), config.demoClientId, undefined, oidc.ClientSecretBasic(config.demoClientSecret), {
        // The demo runs on plain http://127.0.0.1; a real relying party talks https only.
        execute: config.publicUrl.startsWith('http://') ? [oidc.allowInsecureRequests] : [],
      })
      .catch((error: unknown) => {
        discovered = undefined;
        throw error;
      }));

  router.get('/rp/start', async (_req, res, next) => {
    try {
      const tx: Transaction = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
      cookies.set(res, TX_COOKIE, tx, 600);
      const url = oidc.buildAuthorizationUrl(await configuration(), {
        redirect_uri: config.demoRedirectUri,
        scope: 'openid profile email offline_access',
        state: tx.state,
        nonce: tx.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(tx.verifier),
        code_challenge_method: 'S256',
      });
      res.redirect(302, url.href);
    } catch (error) {
      next(error);
    }
  });

  router.get('/callback', async (req, res) => {
    const tx = cookies.get<Transaction>(req, TX_COOKIE);
    cookies.clear(res, TX_COOKIE);
    if (!tx) {
      res.status(400).type('html').send('<p>No sign-in in progress (or it expired). <a href="/rp/start">Start again</a>.</p>');
      return;
    }
    try {
      const current = new URL(req.originalUrl, config.publicUrl);
      const tokens = await oidc.authorizationCodeGrant(await configuration(), current, {
        expectedState: tx.state,
        expectedNonce: tx.nonce,
        pkceCodeVerifier: tx.verifier,
      });
      const claims = tokens.claims()!;
      const user = await oidc.fetchUserInfo(await configuration(), tokens.access_token, claims.sub);
      const quota = await showQuota(tokens.access_token);
      res.type('html').send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed in</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:3rem auto}pre{background:#f3f4f6;padding:1rem;overflow:auto}</style></head><body>
<h1>Signed in as ${escape(String(user.name ?? user.sub))}</h1>
<p>The relying party exchanged the code server-side and called userinfo with the access token.</p>
<h2>User info</h2><pre>${escape(JSON.stringify(user, null, 2))}</pre>
<h2>Tokens</h2><pre>${escape(JSON.stringify({ scope: tokens.scope, expires_in: tokens.expires_in, refresh_token: tokens.refresh_token ? '(issued)' : '(none)' }, null, 2))}</pre>
<h2>Quota of GET /openapi/v1/ping for this application</h2><pre>${escape(JSON.stringify(quota, null, 2))}</pre>
<p><a href="/rp/start">Sign in again</a></p></body></html>`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      res.status(400).type('html').send(`<h1>Sign-in failed</h1><p>${escape(message)}</p><p><a href="/rp/start">Start again</a></p>`);
    }
  });

  return router;
}
