/**
 * The example (`npm start`) with STORE=redis and REDIS_CLUSTER_NODES on a Redis Cluster of three
 * masters: a user signs in and approves, the demo client exchanges the code (RFC 6749 4.1, PKCE
 * per RFC 7636) and calls the host's guarded /openapi/v1/ping; the OAuth records and the quota
 * counters are then found in the cluster.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../examples/config.js';
import { startExample, type RunningExample } from '../support/example.js';
import { describeRedisCluster, startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';

async function scanNode(node: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** `name=value; ...` of a response's Set-Cookie headers, to send back as a browser would. */
const cookiesOf = (res: Response): string => res.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');

describe('REDIS_CLUSTER_NODES', () => {
  it('lists the seed nodes of the cluster, and is absent by default', () => {
    expect(readConfig({ STORE: 'redis', REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001,[::1]:7002' }).redisClusterNodes).toEqual([
      '10.0.0.1:7000',
      'redis-b:7001',
      '[::1]:7002',
    ]);
    expect(readConfig({ STORE: 'redis' }).redisClusterNodes).toBeUndefined();
  });

  it.each(['10.0.0.1', '10.0.0.1:7000,', 'redis://a:7000', 'a:0', 'a:70000', 'a b:7000'])('fails at start on %j, naming the variable', (value) => {
    expect(() => readConfig({ REDIS_CLUSTER_NODES: value })).toThrow(/^REDIS_CLUSTER_NODES must be host:port/);
  });
});

describeRedisCluster('the example on a Redis Cluster (STORE=redis, REDIS_CLUSTER_NODES)', () => {
  let cluster: RedisCluster | undefined;
  let example: RunningExample | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    example = await startExample({ env: { STORE: 'redis', REDIS_CLUSTER_NODES: cluster.nodeList } });
  }, 60_000);
  afterAll(async () => {
    await example?.stop();
    await cluster?.stop();
  });

  it('signs in, exchanges the code and makes a guarded call, keeping its records and counters in the cluster', async () => {
    const base = example!.base;
    const diagnostics = () => `\n--- example output ---\n${example!.output()}`;
    const redirectUri = `${base}/callback`;
    const verifier = randomBytes(32).toString('base64url');
    const authorize = `${base}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: 'demo-client',
      redirect_uri: redirectUri,
      scope: 'openid profile',
      state: 'cluster-state',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })}`;

    // Signed out, the platform sends the user to the host's login page, which comes back here.
    let res = await fetch(authorize, { redirect: 'manual' });
    expect(res.status, diagnostics()).toBe(302);
    const login = new URL(res.headers.get('location')!, base);
    expect(login.pathname).toBe('/login');
    res = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ username: 'demo', password: 'demo', return_to: login.searchParams.get('return_to')! }),
    });
    expect(res.status).toBe(303);
    const cookie = cookiesOf(res);
    res = await fetch(new URL(res.headers.get('location')!, base), { headers: { cookie }, redirect: 'manual' });
    expect(res.status, diagnostics()).toBe(200);
    const transaction = /<input type="hidden" name="transaction" value="([^"]*)">/.exec(await res.text())?.[1]?.replace(/&amp;/g, '&');
    expect(transaction, 'the consent page has a transaction field').toBeTruthy();

    res = await fetch(`${base}/oauth/consent`, {
      method: 'POST',
      headers: { cookie },
      redirect: 'manual',
      body: new URLSearchParams({ transaction: transaction!, decision: 'approve' }),
    });
    expect(res.status, diagnostics()).toBe(302);
    const callback = new URL(res.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
    const code = callback.searchParams.get('code');
    expect(code, callback.search).toBeTruthy();

    res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri, code_verifier: verifier }),
    });
    const tokens = (await res.json()) as { access_token?: string };
    expect(res.status, JSON.stringify(tokens)).toBe(200);

    res = await fetch(`${base}/openapi/v1/ping`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(res.status, diagnostics()).toBe(200);
    expect(await res.json()).toMatchObject({ code: 0, data: { pong: true, clientId: 'demo-client', sub: 'demo-user-1' } });

    // Everything lives in the cluster: the demo client's record and the call's three counters, on one master.
    const client = await cluster!.client();
    expect(JSON.parse((await client.get('cp:oauth:client:demo-client')) ?? 'null')).toMatchObject({ id: 'demo-client' });
    const perMaster = await Promise.all(client.nodes('master').map((node) => scanNode(node, '{cp:q:demo-client:/openapi/v1/ping}:*')));
    expect(perMaster.map((keys) => keys.length).sort()).toEqual([0, 0, 3]);
    const counters = perMaster.flat();
    expect(await Promise.all(counters.map((key) => client.get(key)))).toEqual(['1', '1', '1']);
  });
});
