/**
 * The Redis OAuth store on the run's Redis Cluster of three masters (test/support/redis-cluster.ts),
 * through an ioredis Cluster: the conformance suite, and grants spread over every master, each
 * grant one key under its own hash tag, which is what lets its scripts work on a cluster.
 */
import { expect, it } from 'vitest';
import { failureWindows } from '../../src/oauth/failure-windows.js';
import { createLoginThrottle } from '../../src/oauth/login-throttle.js';
import { createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { scanKeys } from '../support/redis-cluster.js';
import { describeRedisCluster, useRedisCluster } from '../support/redis-cluster-suite.js';
import { uniqueName } from '../support/services.js';
import { BASE_TIME, describeOAuthStoreConformance, issueGrant } from './store-conformance.js';

describeRedisCluster('Redis OAuthStore on a Redis Cluster of three masters', () => {
  const redis = useRedisCluster();

  describeOAuthStoreConformance({
    name: 'Redis Cluster',
    // A prefix of its own; the whole cluster goes away with the run.
    create: async (now) => ({ store: createRedisOAuthStore({ client: redis.client, prefix: `${uniqueName('oauth')}:`, now }), cleanup: async () => {} }),
  });

  it('spreads grants over every master, keeps each grant on one, and revokes a grant there', async () => {
    const prefix = `${uniqueName('oauth_spread')}:`;
    const { client } = redis;
    const store = createRedisOAuthStore({ client, prefix, now: () => BASE_TIME });
    const grants = Array.from({ length: 60 }, (_, i) => `grant-${i}`);
    const saved = await Promise.all(grants.map(async (grantId) => ({ grantId, ...(await issueGrant(store, { grantId })) })));

    const masters = client.nodes('master');
    expect(masters).toHaveLength(3);
    const perMaster = await Promise.all(masters.map((node) => scanKeys(node, `${prefix}*`)));
    expect(perMaster.map((keys) => keys.length > 0)).toEqual([true, true, true]);
    for (const grant of grants) {
      // one key per grant, on one master
      const holders = perMaster.map((keys) => keys.filter((key) => key.startsWith(`${prefix}{${grant}}:`)).length);
      expect(holders.filter((n) => n > 0), grant).toEqual([1]);
    }

    for (const { grantId, access } of saved) {
      expect(await store.findAccessToken(access.ref)).toBeDefined();
      await store.revokeGrant(grantId);
      expect(await store.findAccessToken(access.ref)).toBeUndefined();
    }
  });

  it('counts failed logins on the cluster: each window one key on one master, the limit exact under concurrency', async () => {
    const prefix = `${uniqueName('login_cluster')}:`;
    const { client } = redis;
    const logins = createLoginThrottle({ failures: 5, addressFailures: 500, store: createRedisOAuthStore({ client, prefix }) });
    const burst = await Promise.all(Array.from({ length: 60 }, () => logins.attempt('demo', '198.18.3.1')));
    expect(burst.filter((attempt) => attempt.retryAfter === 0)).toHaveLength(5);
    // Wrong passwords from many addresses: their windows land on every master.
    for (let i = 0; i < 30; i++) await logins.attempt('demo', `198.18.4.${i}`);
    const right = await logins.attempt('demo', '198.18.4.0');
    expect(right.retryAfter).toBe(0);
    await right.succeeded();
    const perMaster = await Promise.all(client.nodes('master').map((node) => scanKeys(node, `${prefix}failures:login:*`)));
    expect(perMaster.map((keys) => keys.length > 0)).toEqual([true, true, true]);
  });

  it('a count that reaches the cluster after its own give-back counts nothing: the window and its given-back ids share a slot', async () => {
    const counts = failureWindows(createRedisOAuthStore({ client: redis.client, prefix: `${uniqueName('late_cluster')}:` }), 'login', 60_000);
    for (let i = 0; i < 30; i++) {
      await counts.reserve(`key-${i}`, 'counted');
      await counts.giveBack(`key-${i}`, 'late');
      expect(await counts.reserve(`key-${i}`, 'late')).toMatchObject({ count: 1 });
    }
  });
});
