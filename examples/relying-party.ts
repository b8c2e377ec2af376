/**
 * A small relying party living in the same example: `/rp/start` builds the authorization URL
 * (state, nonce, PKCE S256) with openid-client, and `/callback` exchanges the code server-side,
 * shows the user info, how to call the quota-guarded `/openapi/v1/ping` with the access token,
 * and how much of its quota is left. A user who declines on the consent page comes back to
 * `/callback` with `error=access_denied` and reads that nothing was shared. The client secret
 * never reaches the browser.
 */
import * as oidc from 'openid-client';
import type { ExampleConfig } from './config.js';
import { redirect, type SiteAnswer, type SiteRequest } from './http.js';
import { escapeHtml, page } from './pages.js';
import type { SignedCookies } from './session.js';

const TX_COOKIE = 'rp_tx';
const PING = '/openapi/v1/ping';

interface Transaction {
  state: string;
  nonce: string;
  verifier: string;
}

interface QuotaPeriod {
  period: string;
  limit: number;
  remaining: number;
  unlimited: boolean;
  reset_at: string;
}

const TRY_AGAIN = '<p><a href="/rp/start">Try again</a> · <a href="/">Start page</a></p>';

/** The quota left on `/openapi/v1/ping`, from the free get_quota call, as an HTML fragment. */
async function quotaLeft(publicUrl: string, accessToken: string): Promise<string> {
  try {
    const response = await fetch(`${publicUrl}/openapi/v1/get_quota?api_path=${encodeURIComponent(PING)}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    const body = (await response.json()) as { code?: number; message?: string; data?: { periods?: QuotaPeriod[] } };
    const periods = body.data?.periods;
    if (!response.ok || !Array.isArray(periods)) {
      return `<p class="error">get_quota answered ${response.status}: ${escapeHtml(String(body.message ?? 'no report'))}</p>`;
    }
    const rows = periods.map((p) =>
      p.unlimited
        ? `<tr><td>${escapeHtml(p.period)}</td><td colspan="2">unlimited</td></tr>`
        : `<tr><td>${escapeHtml(p.period)}</td><td>${p.remaining} of ${p.limit} left</td><td class="muted">until ${escapeHtml(p.reset_at)}</td></tr>`,
    );
    return `<table><tr><th>Period</th><th>Left</th><th>Resets</th></tr>${rows.join('')}</table>`;
  } catch (error) {
    return `<p class="error">get_quota could not be reached: ${escapeHtml(error instanceof Error ? error.message : String(error))}</p>`;
  }
}

function failed(status: number, message: string, cookies: string[]): SiteAnswer {
  return page(status, 'Sign-in failed', `<h1>Sign-in failed</h1><p>${escapeHtml(message)}</p>${TRY_AGAIN}`, { cookies });
}

export interface RelyingParty {
  /** GET /rp/start */
  start(request: SiteRequest): Promise<SiteAnswer>;
  /** GET /callback */
  callback(request: SiteRequest): Promise<SiteAnswer>;
}

export function createRelyingParty(config: ExampleConfig, cookies: SignedCookies): RelyingParty {
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

  const start = async (): Promise<SiteAnswer> => {
    const tx: Transaction = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
    const url = oidc.buildAuthorizationUrl(await configuration(), {
      redirect_uri: config.demoRedirectUri,
      scope: 'openid profile email offline_access',
      state: tx.state,
      nonce: tx.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(tx.verifier),
      code_challenge_method: 'S256',
    });
    return redirect(302, url.href, [cookies.set(TX_COOKIE, tx, 600)]);
  };

  const callback = async (request: SiteRequest): Promise<SiteAnswer> => {
    const tx = cookies.get<Transaction>(request.header('cookie'), TX_COOKIE);
    const cleared = [cookies.clear(TX_COOKIE)];
    if (!tx) return failed(400, 'No sign-in is in progress in this browser, or it took longer than 10 minutes.', cleared);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      // Checks state, iss, the code exchange with PKCE and the ID token's nonce (RFC 9700 section 2.1).
      tokens = await oidc.authorizationCodeGrant(await configuration(), new URL(request.url, config.publicUrl), {
        expectedState: tx.state,
        expectedNonce: tx.nonce,
        pkceCodeVerifier: tx.verifier,
      });
    } catch (error) {
      if (error instanceof oidc.AuthorizationResponseError && error.error === 'access_denied') {
        return page(
          200,
          'Access declined',
          `<h1>You declined</h1><p>You declined to let this application use your account, so nothing was shared with it.</p>
<p class="muted">The platform answered <code>error=access_denied</code>.</p>${TRY_AGAIN}`,
          { cookies: cleared },
        );
      }
      if (error instanceof oidc.AuthorizationResponseError) {
        return failed(400, `The platform answered ${error.error}${error.error_description ? `: ${error.error_description}` : ''}.`, cleared);
      }
      return failed(400, error instanceof Error ? error.message : String(error), cleared);
    }
    const user = await oidc.fetchUserInfo(await configuration(), tokens.access_token, tokens.claims()!.sub);
    const curl = `curl -H 'Authorization: Bearer ${tokens.access_token}' '${config.publicUrl}${PING}'`;
    const summary = { scope: tokens.scope, expires_in: tokens.expires_in, refresh_token: tokens.refresh_token ? '(issued)' : '(none)' };
    return page(
      200,
      'Signed in',
      `<h1>Signed in as ${escapeHtml(String(user.name ?? user.sub))}</h1>
<p>The relying party exchanged the code server-side and called userinfo with the access token.</p>
<h2>Call the API</h2><p><code>GET ${PING}</code> is guarded by the platform's quota. Call it with the access token
(valid for ${Number(tokens.expires_in)} s):</p><pre id="curl"><code>${escapeHtml(curl)}</code></pre>
<h2>Quota left on ${PING}</h2>${await quotaLeft(config.publicUrl, tokens.access_token)}
<h2>User info</h2><pre>${escapeHtml(JSON.stringify(user, null, 2))}</pre>
<h2>Tokens</h2><pre>${escapeHtml(JSON.stringify(summary, null, 2))}</pre>
<p><a href="/rp/start">Sign in again</a> · <a href="/">Start page</a></p>`,
      { cookies: cleared },
    );
  };

  return { start, callback };
}
