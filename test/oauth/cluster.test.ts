/**
 * The Redis OAuth store on a Redis Cluster of three masters (test/support/redis-cluster.ts),
 * through an ioredis Cluster: the conformance suite, and grants spread over every master, each
 * grant one key under its own hash tag, which is what lets its scripts work on a cluster.
 */
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { describeRedisCluster, startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { uniqueName } from '../support/services.js';
import { BASE_TIME, describeOAuthStoreConformance, issueGrant } from './store-conformance.js';

/** Every key of one master under a prefix (SCAN: KEYS would block it). */
async function scanNode(node: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

describeRedisCluster('Redis OAuthStore on a Redis Cluster of three masters', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = await cluster.client({ redisOptions: { maxRetriesPerRequest: 1 } });
  });
  afterAll(() => cluster?.stop());

  describeOAuthStoreConformance({
    name: 'Redis Cluster',
    // A prefix of its own; the whole cluster goes away with this file.
    create: async (now) => ({ store: createRedisOAuthStore({ client, prefix: `${uniqueName('oauth')}:`, now }), cleanup: async () => {} }),
  });

  it('spreads grants over every master, keeps each grant on one, and revokes a grant there', async () => {
    const prefix = `${uniqueName('oauth_spread')}:`;
    const store = createRedisOAuthStore({ client, prefix, now: () => BASE_TIME });
    const grants = Array.from({ length: 60 }, (_, i) => `grant-${i}`);
    const saved = await Promise.all(grants.map(async (grantId) => ({ grantId, ...(await issueGrant(store, { grantId })) })));

    const masters = client.nodes('master');
    expect(masters).toHaveLength(3);
    const perMaster = await Promise.all(masters.map((node) => scanNode(node, prefix)));
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
});
