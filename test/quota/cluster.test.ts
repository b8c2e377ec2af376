/**
 * The Redis quota store on the run's Redis Cluster of three masters (test/support/redis-cluster.ts),
 * through an ioredis Cluster: the conformance suite, counters spread over every master with the
 * keys of one client and path on one, and four processes bursting at one client, or at 50,
 * admitting exactly the limit per client.
 */
import { expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { CONSUME_SCRIPT_SHA, createQuotaService, createRedisQuotaStore } from '../../src/quota/index.js';
import { scanKeys } from '../support/redis-cluster.js';
import { clusterNodes, describeRedisCluster, useRedisCluster } from '../support/redis-cluster-suite.js';
import { uniqueName } from '../support/services.js';
import { BURST_LIMIT, BURSTS, expectExactlyTheLimit, useBurstWorkers } from './burst.js';
import { describeQuotaStoreConformance } from './store-conformance.js';

describeRedisCluster('redis quota store on a Redis Cluster of three masters', () => {
  const redis = useRedisCluster();
  const burst = useBurstWorkers();

  describeQuotaStoreConformance({
    name: 'redis cluster',
    // A prefix of its own per test; the whole cluster goes away with the run.
    create: () => ({ store: createRedisQuotaStore({ client: redis.client, prefix: uniqueName('quota') }), teardown: async () => {} }),
  });

  it('spreads clients over every master, keeps the keys of one client and path on one, and loads the script on each', async () => {
    const prefix = uniqueName('spread');
    const now = Date.UTC(2026, 10, 21, 10, 0, 5);
    const { client } = redis;
    const quota = createQuotaService({ store: createRedisQuotaStore({ client, prefix }), now: () => now, logger: silentLogger, onStoreError: 'closed' });
    const path = '/openapi/v1/orders';
    const ids = Array.from({ length: 60 }, (_, i) => `client-${i}`);
    for (const id of ids) expect((await quota.consume(id, path)).outcome).toBe('admitted');

    const masters = client.nodes('master');
    expect(masters).toHaveLength(3);
    const perMaster = await Promise.all(masters.map((node) => scanKeys(node, `{${prefix}:*`)));
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
    const quota = createQuotaService({ store: createRedisQuotaStore({ client: redis.client, prefix: uniqueName('braces') }), now: () => now, logger: silentLogger, onStoreError: 'closed' });
    for (const [id, path] of [['tag:{odd}/client', '/openapi/v1/a}b{c}'], ['}{', '/openapi/v1/{x}'], ['plain', '/openapi/v1/}']] as const) {
      expect((await quota.consume(id, path)).outcome, `${id} ${path}`).toBe('admitted');
      const inspection = await quota.inspect(id, path);
      expect(inspection.outcome === 'ok' && inspection.report.periods.map((p) => p.used), `${id} ${path}`).toEqual([1, 1, 1]);
    }
  });

  for (const shape of BURSTS) {
    it(`${shape.name}: each client admitted exactly ${BURST_LIMIT}, its counters read ${BURST_LIMIT}`, async () => {
      const prefix = uniqueName('quota_burst');
      const result = await burst({ kind: 'redis', clusterNodes: clusterNodes!, prefix }, shape);
      await expectExactlyTheLimit(createRedisQuotaStore({ client: redis.client, prefix }), result);
    }, 150_000);
  }
});
