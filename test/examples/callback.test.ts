/**
 * The example's relying party end to end over HTTP, as a browser goes through it: /rp/start, the
 * host's login page, the platform's consent page, then /callback. Declining shows a readable
 * page (RFC 6749 section 4.1.2.1 `access_denied`); approving shows how to call the
 * quota-guarded /openapi/v1/ping with the access token, and the quota left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STACK_TRACE, Visitor, decideAfterLogin, decodeHtml, expectSecurityHeaders, startExample, type Page, type RunningExample } from './support.js';

/** From /rp/start through sign-in to the consent page, then the user's decision; answers the page /callback shows. */
async function decide(visitor: Visitor, decision: 'approve' | 'deny'): Promise<Page> {
  const answer = await decideAfterLogin(visitor, '/rp/start', decision);
  expect(answer.location?.pathname).toBe('/callback');
  return visitor.follow(answer);
}

describe('the example relying party', () => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startExample({ QUOTA_MINUTE: '7', QUOTA_DAY: '70' });
  });
  afterAll(() => example?.close());

  it('shows a readable page with a way back when the user declines', async () => {
    const visitor = new Visitor(example.base);
    const page = await decide(visitor, 'deny');
    expect(page.url.searchParams.get('error')).toBe('access_denied');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expectSecurityHeaders(page.headers);
    expect(page.text).toContain('<h1>You declined</h1>');
    expect(page.text).toContain('nothing was shared');
    expect(page.text).toContain('<a href="/rp/start">Try again</a>');
    expect(page.text).toContain('<style>'); // the login page's stylesheet, not a bare page
    expect(page.text).not.toMatch(STACK_TRACE);
  });

  it('shows a copyable curl for /openapi/v1/ping with the access token, and the quota left', async () => {
    const visitor = new Visitor(example.base);
    const page = await decide(visitor, 'approve');
    expect(page.status, page.text.slice(0, 500)).toBe(200);
    expectSecurityHeaders(page.headers);
    expect(page.text).toContain('<h1>Signed in as Demo User</h1>');

    const curl = decodeHtml(/<pre id="curl"><code>([^<]*)<\/code><\/pre>/.exec(page.text)?.[1] ?? '');
    const match = /^curl -H 'Authorization: Bearer ([^']+)' '([^']+)'$/.exec(curl);
    expect(match, `the page shows: ${curl}`).not.toBeNull();
    const [, token, url] = match!;
    expect(url).toBe(`${example.base}/openapi/v1/ping`);

    // What the curl does: the guarded endpoint answers for this application and user.
    const ping = await fetch(url!, { headers: { authorization: `Bearer ${token}` } });
    expect(ping.status).toBe(200);
    expect(await ping.json()).toMatchObject({ code: 0, data: { pong: true, clientId: 'demo-client', sub: 'demo-user-1' } });

    // The quota left, as get_quota reported it before the call above.
    expect(page.text).toMatch(/<td>minute<\/td><td>7 of 7 left<\/td>/);
    expect(page.text).toMatch(/<td>day<\/td><td>70 of 70 left<\/td>/);
    expect(page.text).toMatch(/<td>month<\/td><td colspan="2">unlimited<\/td>/);
  });

  it('shows another error of the authorization response as a readable, HTML-escaped page', async () => {
    const visitor = new Visitor(example.base);
    const start = await visitor.request('/rp/start'); // a sign-in in progress: the transaction cookie
    const error = new URLSearchParams({
      error: 'invalid_scope',
      error_description: '<script>alert(1)</script>',
      state: start.location!.searchParams.get('state')!,
      iss: `${example.base}/oauth`,
    });
    const page = await visitor.request(`/callback?${error}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain('<h1>Sign-in failed</h1>');
    expect(page.text).toContain('invalid_scope: &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>');
    expect(page.text).not.toMatch(STACK_TRACE);
  });

  it('explains a callback with no sign-in in progress', async () => {
    const page = await new Visitor(example.base).request('/callback?code=x&state=y');
    expect(page.status).toBe(400);
    expect(page.text).toContain('No sign-in is in progress');
    expect(page.text).toContain('<a href="/rp/start">Try again</a>');
  });
});
