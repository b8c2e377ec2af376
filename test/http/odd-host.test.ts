/**
 * A Host header no URL can hold (RFC 9110 7.2; `999.1.1.1`, an IPv4 address out of range) is the
 * caller's business: every host answers the platform's routes as for any other Host, reading the
 * body too (docs/hosts.md). On @hono/node-server the WHATWG Request behind the body cannot be
 * built from such a Host.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, closeHosts, startHost } from './quota-helpers.js';
import { SERVICE } from '../support/oauth.js';

afterEach(closeHosts);

describe.each(ADAPTER_NAMES)('a Host header no URL can hold, on %s', (adapter) => {
  it('answers discovery with the 400 naming the Host (no publicUrl to fall back on), and a token request with its token', async () => {
    const h = await startHost(adapter, { quota: {} });
    const discovery = await h.http().get('/oauth/.well-known/openid-configuration').set('Host', '999.1.1.1');
    expect([discovery.status, discovery.body.error]).toEqual([400, 'invalid_request']);
    const token = await h
      .http()
      .post('/oauth/token')
      .set('Host', '999.1.1.1')
      .auth(SERVICE.id, SERVICE.secret)
      .type('form')
      .send({ grant_type: 'client_credentials' });
    expect([token.status, typeof token.body.access_token]).toEqual([200, 'string']);
  });
});
