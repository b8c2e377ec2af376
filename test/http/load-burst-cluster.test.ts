/**
 * Load is not an outage on a Redis Cluster: the burst of test/http/load-burst.ts on the run's
 * cluster, each master behind a slow proxy.
 */
import { clusterNodes, describeRedisCluster } from '../support/redis-cluster-suite.js';
import { hostPort, startTcpProxy } from '../support/tcp-proxy.js';
import { DELAY, describeBurst } from './load-burst.js';

const nodes = (clusterNodes ?? '').split(',').filter(Boolean).map((node) => hostPort(`redis://${node}`, 6379));

describeBurst('Redis Cluster', describeRedisCluster, async (label) => {
  const proxies = await Promise.all(nodes.map((node) => startTcpProxy(node, DELAY)));
  // The nodes announce their own addresses: the clients map each to its proxy.
  const natMap = Object.fromEntries(nodes.map((node, i) => [`${node.host}:${node.port}`, { host: proxies[i]!.host, port: proxies[i]!.port }]));
  return {
    env: { BURST_STORE: 'cluster', BURST_CLUSTER: JSON.stringify({ nodes: proxies.map((p) => `${p.host}:${p.port}`), natMap }), BURST_NAME: label },
    proxies,
    async teardown() {
      // The run's cluster is stopped, keys and all, when the run ends.
      await Promise.all(proxies.map((proxy) => proxy.close()));
    },
  };
});
