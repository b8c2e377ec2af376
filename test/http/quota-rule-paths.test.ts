/**
 * A rule's path beyond ASCII (docs/quota.md#rules): requests arrive percent-encoded as UTF-8,
 * Fastify counts its route's own spelling, and a rule may be written either way; all of them name
 * one endpoint, so the rule applies, on every adapter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { accessToken, ADAPTER_NAMES, ARGER, closeHosts, CONFIDENTIAL, OTHER, ping, report, startHost } from './quota-helpers.js';

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };
/** How a client sends ARGER: `/openapi/v1/%C3%84rger`. */
const SENT = encodeURI(ARGER);
const COUNTED = '/openapi/v1/%c3%84rger';

afterEach(closeHosts);

describe.each(ADAPTER_NAMES)('a rule path beyond ASCII on %s', (adapter) => {
  it('applies to the percent-encoded requests whether the rule holds the characters or their escapes', async () => {
    const h = await startHost(adapter, { quota: { rules: [{ scope: 'global', apiPath: ARGER, minute: 2 }] }, platform: { admin: { token: TOKEN } } });
    const { token } = await accessToken(h, CONFIDENTIAL);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await ping(h, token, SENT)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await report(h, token, ARGER)).data).toMatchObject({ api_path: COUNTED, scope: 'global' });
    expect((await report(h, token, SENT)).data.periods[0]).toMatchObject({ limit: 2, used: 2 });

    const saved = await h.http().put('/admin/rules').set(OPERATOR).send({ scope: 'client', clientId: OTHER.id, apiPath: SENT, minute: 1 });
    expect([saved.status, saved.body.data?.apiPath]).toEqual([200, COUNTED]);
    const other = await accessToken(h, OTHER);
    expect([(await ping(h, other.token, SENT)).status, (await ping(h, other.token, SENT)).status]).toEqual([200, 429]);
  });
});
