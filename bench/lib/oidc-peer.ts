/**
 * Runner side of the oidc-provider peer (bench/servers/oidc-provider.ts): one grant through its
 * real HTTP flow, as a browser and relying party walk it: authorize → interaction (login and
 * consent at once, the user named by the bench's header) → resume → token. oidc-provider ties
 * these steps together with cookies, so they are carried from answer to request.
 */
import { BENCH_CLIENT, BENCH_SCOPE, clientBasicAuth, USER_HEADER, type TokenSet } from './oauth.js';

/** The cookies of one browser: name → value (paths are ignored; every step is on one origin). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** At most this many redirects between authorize and the callback (authorize → interaction → resume → callback). */
const MAX_HOPS = 5;

/**
 * One grant for `user` on the oidc-provider peer. `prompt=consent` is asked because oidc-provider
 * drops offline_access without it (OpenID Connect Core 1.0 section 11). Throws with the answer on
 * any unexpected step.
 */
export async function authorizePeerGrant(baseUrl: string, user: string, scope = BENCH_SCOPE): Promise<TokenSet> {
  const jar = new CookieJar();
  const state = `st-${user}`;
  const query = new URLSearchParams({ response_type: 'code', client_id: BENCH_CLIENT.id, redirect_uri: BENCH_CLIENT.redirectUri, scope, state, prompt: 'consent' });
  let location = `${baseUrl}/auth?${query}`;
  let code: string | null = null;
  for (let hop = 0; hop < MAX_HOPS && code === null; hop++) {
    const res = await fetch(location, { headers: { [USER_HEADER]: user, cookie: jar.header() }, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    jar.take(res);
    const next = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !next) throw new Error(`oidc-provider authorize for ${user}: expected a redirect from ${location}, got HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
    const target = new URL(next, location);
    if (target.href.startsWith(BENCH_CLIENT.redirectUri)) {
      code = target.searchParams.get('code');
      if (!code || target.searchParams.get('state') !== state) throw new Error(`oidc-provider authorize for ${user}: the callback has no code: ${next}`);
    }
    location = target.href;
  }
  if (code === null) throw new Error(`oidc-provider authorize for ${user}: no callback after ${MAX_HOPS} redirects (last ${location})`);

  const res = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: { authorization: clientBasicAuth, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: BENCH_CLIENT.redirectUri }).toString(),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`oidc-provider token for ${user}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as TokenSet;
}
