/**
 * The Redis quota store on a Redis Cluster of three masters (test/support/redis-cluster.ts),
 * through an ioredis Cluster: the conformance suite, counters spread over every master with the
 * keys of one client and path on one, and four processes bursting at one counter admitting
 * exactly the limit.
 */
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { CONSUME_SCRIPT_SHA, createQuotaService, createRedisQuotaStore } from '../../src/quota/index.js';
import { describeRedisCluster, startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { uniqueName } from '../support/services.js';
import { burst, expectExactlyTheLimit, usedAfterBurst } from './burst.js';
import { describeQuotaStoreConformance } from './store-conformance.js';

/** Every key of one master under a pattern (SCAN: KEYS would block it). */
async function scanNode(node: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  for (let i = 0; i < 1000; i++) {
    const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
    if (cursor === '0') return keys;
  }
  throw new Error('SCAN did not finish');
}

describeRedisCluster('redis quota store on a Redis Cluster of three masters', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = await cluster.client({ redisOptions: { maxRetriesPerRequest: 1 } });
  });
  afterAll(() => cluster?.stop());

  describeQuotaStoreConformance({
    name: 'redis cluster',
    // A prefix of its own per test; the whole cluster goes away with this file.
    create: () => ({ store: createRedisQuotaStore({ client, prefix: uniqueName('quota') }), teardown: async () => {} }),
  });

  it('spreads clients over every master, keeps the keys of one client and path on one, and loads the script on each', async () => {
    const prefix = uniqueName('spread');
    const now = Date.UTC(2026, 10, 21, 10, 0, 5);
    const quota = createQuotaService({ store: createRedisQuotaStore({ client, prefix }), now: () => now, logger: silentLogger, onStoreError: 'closed' });
    const path = '/openapi/v1/orders';
    const ids = Array.from({ length: 60 }, (_, i) => `client-${i}`);
    for (const id of ids) expect((await quota.consume(id, path)).outcome).toBe('admitted');

    const masters = client.nodes('master');
    expect(masters).toHaveLength(3);
    const perMaster = await Promise.all(masters.map((node) => scanNode(node, `{${prefix}:*`)));
    expect(perMaster.map((keys) => keys.length > 0)).toEqual([true, true, true]);
    expect(perMaster.flat()).toHaveLength(ids.length * 3); // minute, day, month
    for (const id of ids) {
      const holders = perMaster.map((keys) => keys.filter((key) => key.startsWith(`{${prefix}:${id}:${path}}:`)).length);
      expect(holders.filter((n) => n > 0), id).toEqual([3]);
    }
    // get_quota reads the three counters of a call with one MGET, on the master that holds them
    for (const id of ids) {
      const inspection = await quota.inspect(id, path);
      expect(inspection.outcome === 'ok' && inspection.report.periods.map((p) => p.used)).toEqual([1, 1, 1]);
    }
    // a fresh master answers NOSCRIPT once; the store then loads the script there with EVAL
    for (const node of masters) expect(await node.script('EXISTS', CONSUME_SCRIPT_SHA)).toEqual([1]);
  });

  it('keeps a call in one slot whatever braces its client id and path hold', async () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 5);
    const quota = createQuotaService({ store: createRedisQuotaStore({ client, prefix: uniqueName('braces') }), now: () => now, logger: silentLogger, onStoreError: 'closed' });
    for (const [id, path] of [['tag:{odd}/client', '/openapi/v1/a}b{c}'], ['}{', '/openapi/v1/{x}'], ['plain', '/openapi/v1/}']] as const) {
      expect((await quota.consume(id, path)).outcome, `${id} ${path}`).toBe('admitted');
      const inspection = await quota.inspect(id, path);
      expect(inspection.outcome === 'ok' && inspection.report.periods.map((p) => p.used), `${id} ${path}`).toEqual([1, 1, 1]);
    }
  });

  it('admits exactly 100 of 4 processes x 400 concurrent calls, and the counters read exactly 100', async () => {
    const prefix = uniqueName('quota_burst');
    const calls = 400;
    const { clientId, tallies } = await burst({ QUOTA_STORE: 'redis', REDIS_CLUSTER_NODES: cluster.nodeList, QUOTA_PREFIX: prefix }, calls);
    expectExactlyTheLimit(tallies, calls);
    expect(await usedAfterBurst(createRedisQuotaStore({ client, prefix }), clientId)).toEqual({ minute: 100, day: 100, month: 100 });
  }, 60_000);
});
