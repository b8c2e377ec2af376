/**
 * The example (`npm start`) with STORE=redis and REDIS_CLUSTER_NODES on the run's Redis Cluster
 * of three masters (test/support/redis-cluster.ts): a user signs in and approves, the demo client
 * exchanges the code (RFC 6749 4.1, PKCE per RFC 7636) and calls the host's guarded
 * /openapi/v1/ping; the OAuth records and the quota counters are then found in the cluster. The
 * example keeps its default prefixes (`cp:oauth:`, `cp:q:`), which no other file of the run uses.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../examples/config.js';
import { startExample, type RunningExample } from '../support/example.js';
import { hiddenInput, signIn, Visitor } from './support.js';
import { scanKeys } from '../support/redis-cluster.js';
import { clusterNodes, describeRedisCluster, useRedisCluster } from '../support/redis-cluster-suite.js';

describe('REDIS_CLUSTER_NODES', () => {
  it('lists the startup nodes of the cluster, and is absent by default', () => {
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
  const redis = useRedisCluster();
  let example: RunningExample | undefined;
  beforeAll(async () => {
    example = await startExample({ env: { STORE: 'redis', REDIS_CLUSTER_NODES: clusterNodes! } });
  }, 60_000);
  afterAll(() => example?.stop());

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
    const browser = new Visitor(base);
    const toLogin = await browser.request(authorize);
    expect(toLogin.status, diagnostics()).toBe(302);
    expect(toLogin.location?.pathname).toBe('/login');
    const signedIn = await signIn(browser, 'demo', 'demo', toLogin.location!.searchParams.get('return_to')!);
    expect(signedIn.status, diagnostics()).toBe(303);
    const consent = await browser.follow(signedIn);
    expect(consent.status, diagnostics()).toBe(200);
    const transaction = hiddenInput(consent.text, 'transaction');
    expect(transaction, 'the consent page has a transaction field').toBeTruthy();

    const approved = await browser.submit('/oauth/consent', { transaction: transaction!, decision: 'approve' });
    expect(approved.status, diagnostics()).toBe(303);
    const callback = approved.location!;
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
    const code = callback.searchParams.get('code');
    expect(code, callback.search).toBeTruthy();

    let res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri, code_verifier: verifier }),
    });
    const tokens = (await res.json()) as { access_token?: string };
    expect(res.status, JSON.stringify(tokens)).toBe(200);

    res = await fetch(`${base}/openapi/v1/ping`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(res.status, diagnostics()).toBe(200);
    expect(await res.json()).toMatchObject({ code: 0, data: { pong: true, clientId: 'demo-client', sub: 'demo-user-1' } });

    // Everything lives in the cluster: the grant, and the call's three counters on one master. The
    // demo client comes from the options and is never written.
    const { client } = redis;
    const grants = await Promise.all(client.nodes('master').map((node) => scanKeys(node, 'cp:oauth:{*}:grant')));
    expect(grants.flat().length).toBeGreaterThan(0);
    expect(await client.hget('cp:oauth:clients', 'demo-client')).toBeNull();
    const perMaster = await Promise.all(client.nodes('master').map((node) => scanKeys(node, '{cp:q:demo-client:/openapi/v1/ping}:*')));
    expect(perMaster.map((keys) => keys.length).sort()).toEqual([0, 0, 3]);
    const counters = perMaster.flat();
    expect(await Promise.all(counters.map((key) => client.get(key)))).toEqual(['1', '1', '1']);
  });
});
