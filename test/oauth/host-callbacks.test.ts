/**
 * A host's `authenticate` that throws, returns a user without a string `sub`, or an `auth_time`
 * that is not the seconds since the epoch of a past sign-in (which would switch off `max_age` and
 * `prompt=login`, OIDC Core 3.1.2.1): the browser gets
 * the OAuth error page with a 500 (a script asking only for JSON gets RFC 6749 5.2 JSON with
 * `server_error`), never a framework's error page or a stack trace, and the cause is logged once.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { OAuthOptions } from '../../src/oauth/options.js';
import { capturingLogger } from '../support/logger.js';
import { expectNothingInternal } from '../support/courier.js';
import { ADAPTER_NAMES, CONFIDENTIAL, cheapClients, oauthHost, sharedSigningKey, type AdapterName } from '../support/oauth.js';

const AUTHORIZE = `/oauth/authorize?${new URLSearchParams({
  response_type: 'code',
  client_id: CONFIDENTIAL.id,
  redirect_uri: CONFIDENTIAL.redirectUri,
  scope: 'openid profile',
  state: 'state-1',
})}`;

const MISBEHAVING: [string, OAuthOptions['authenticate'], RegExp][] = [
  [
    'throws',
    () => {
      throw new Error('session store unreachable');
    },
    /Error: session store unreachable\n\s+at .*host-callbacks\.test\.ts/,
  ],
  ['returns a user without sub', () => ({ name: 'Alice' }) as never, /with a non-empty string sub.*an object with name/],
  ['returns a numeric sub', async () => ({ sub: 42 }) as never, /with a non-empty string sub.*an object with sub/],
  ['returns auth_time in milliseconds', () => ({ sub: 'alice', auth_time: Date.now() - 30 * 86_400_000 }), /auth_time that is in milliseconds/],
  ['returns auth_time NaN', () => ({ sub: 'alice', auth_time: Number('soon') }), /auth_time that is not a number of seconds/],
  ['returns auth_time an hour ahead', () => ({ sub: 'alice', auth_time: Math.floor(Date.now() / 1000) + 3600 }), /auth_time that is in the future/],
];

async function host(adapter: AdapterName, authenticate: OAuthOptions['authenticate']) {
  const logger = capturingLogger();
  const started = oauthHost(adapter, { clients: await cheapClients(), signingKeys: [await sharedSigningKey()], publicUrl: 'http://127.0.0.1:9', authenticate }, {}, logger);
  await started.ready();
  return { listener: started.listener, logger };
}

describe.each(ADAPTER_NAMES)('a misbehaving authenticate on %s', (adapter) => {
  it('OIDC Core 3.1.2.1: an auth_time with a fraction of a second (Date.now() / 1000) is a sign-in time like any other', async () => {
    const { listener, logger } = await host(adapter, () => ({ sub: 'alice', auth_time: Date.now() / 1000 - 30 }));
    const res = await request(listener).get(`${AUTHORIZE}&max_age=300`).set('accept', 'text/html');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<form');
    expect(logger.records.filter((record) => record.level === 'error')).toEqual([]);
  });

  it.each(MISBEHAVING)('that %s: the error page (500), the cause logged once', async (_, authenticate, logged) => {
    const { listener, logger } = await host(adapter, authenticate);
    const res = await request(listener).get(AUTHORIZE).set('accept', 'text/html,application/xhtml+xml,*/*;q=0.8');
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.text).toContain('This sign-in request cannot be completed');
    expect(res.text).toContain('oauth.authenticate');
    expect(res.text).toContain('<code>server_error</code>');
    expect(res.text).not.toMatch(/session store unreachable|\bat\s+\S+\s+\(/);
    const errors = logger.records.filter((record) => record.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/oauth\.authenticate/);
    expect(JSON.parse(errors[0]!.line)).toMatchObject({ path: '/oauth/authorize' });
    // The stack arrives JSON-encoded in pino's line.
    expect(`${errors[0]!.message} ${errors[0]!.line.replace(/\\n/g, '\n')}`).toMatch(logged);
  });

  it.each(MISBEHAVING)('that %s: RFC 6749 5.2 JSON for a caller that accepts only JSON', async (_, authenticate) => {
    const { listener, logger } = await host(adapter, authenticate);
    const res = await request(listener).get(AUTHORIZE).set('accept', 'application/json');
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ error: 'server_error', error_description: expect.stringContaining('oauth.authenticate') });
    expectNothingInternal(res.text);
    expect(logger.records.filter((record) => record.level === 'error')).toHaveLength(1);
  });
});
