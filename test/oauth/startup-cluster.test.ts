/**
 * `ready()` waits for a Redis Cluster client that is still connecting, whatever its
 * enableOfflineQueue (docs/deployment.md#start): the run's cluster behind proxies that delay
 * each new connection.
 */
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedisOAuthStore } from '../../src/oauth/store/index.js';
import { clusterNodes, describeRedisCluster } from '../support/redis-cluster-suite.js';
import { uniqueName } from '../support/services.js';
import { CONNECTING, readyOutcome } from '../support/startup.js';
import { hostPort, startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const nodes = (clusterNodes ?? '').split(',').filter(Boolean).map((node) => hostPort(`redis://${node}`, 6379));

describeRedisCluster('ready() with a Redis Cluster client that is still connecting', () => {
  let proxies: TcpProxy[];
  beforeAll(async () => {
    proxies = await Promise.all(nodes.map((node) => startTcpProxy(node, CONNECTING)));
  });
  afterAll(async () => {
    await Promise.all((proxies ?? []).map((proxy) => proxy.close()));
  });

  it('resolves once the cluster is ready, with enableOfflineQueue: false', async () => {
    const natMap = Object.fromEntries(nodes.map((node, i) => [`${node.host}:${node.port}`, { host: proxies[i]!.host, port: proxies[i]!.port }]));
    const client = new Cluster([{ host: proxies[0]!.host, port: proxies[0]!.port }], { natMap, enableOfflineQueue: false, redisOptions: { maxRetriesPerRequest: 0 } });
    client.on('error', () => {});
    try {
      expect(client.status).not.toBe('ready');
      const { error } = await readyOutcome(createRedisOAuthStore({ client, prefix: `${uniqueName('startup')}:` }));
      expect(error).toBeUndefined();
      expect(client.status).toBe('ready');
    } finally {
      client.disconnect();
    }
  });
});
