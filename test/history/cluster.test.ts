/**
 * The usage history on a Redis Cluster: each application's keys stay on one master (a hash tag),
 * and applications spread over all of them.
 */
import { expect, it } from 'vitest';
import { createRedisQuotaStore } from '../../src/quota/index.js';
import { scanKeys } from '../support/redis-cluster.js';
import { describeRedisCluster, useRedisCluster } from '../support/redis-cluster-suite.js';
import { uniqueName } from '../support/services.js';
import { count, DAY, historyOf, HOUR, readPoints, RETENTION, T } from './fixtures.js';


describeRedisCluster('usage history on a Redis Cluster of three masters', () => {
  const redis = useRedisCluster();

  it("keeps each application's keys on one master, spreads applications over all, and reads them back", async () => {
    const prefix = uniqueName('history');
    const history = historyOf(createRedisQuotaStore({ client: redis.client, prefix }));
    const ids = Array.from({ length: 30 }, (_, i) => `app-{${i}}`);
    await history.add(
      ids.flatMap((id) => [count(id, '/a', T, 1), count(id, '/a', T + 3 * HOUR, 2)]),
      T + 3 * HOUR,
      RETENTION,
    );
    const perMaster = await Promise.all(redis.client.nodes('master').map((node) => scanKeys(node, `{${prefix}:h:*`)));
    expect(perMaster.map((keys) => keys.length > 0)).toEqual([true, true, true]);
    for (const id of ids) {
      const tag = `{${prefix}:h:${encodeURIComponent(id)}}:`;
      expect(perMaster.filter((keys) => keys.some((key) => key.startsWith(tag))), id).toHaveLength(1);
      const days = await readPoints(history, { clientId: id, step: 'day', from: T - 22 * HOUR, to: T + 2 * DAY });
      expect(days.map((point) => point.admitted)).toEqual(expect.arrayContaining([1, 2]));
    }
  });
});
