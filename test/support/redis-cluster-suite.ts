/**
 * The run's Redis Cluster (started by test/support/redis-cluster.ts, the global setup of the
 * `cluster` project) as the test files see it: a gate for their suites and an ioredis Cluster
 * per suite. Every file keeps its keys under prefixes of its own (`uniqueName()`), since all of
 * them share the cluster.
 */
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port,host:port,...` of the run's Redis Cluster, as REDIS_CLUSTER_NODES takes them; unset without `redis-server`. */
    redisClusterNodes?: string;
  }
}

/** The nodes of the run's cluster, `host:port,host:port,...`. */
export const clusterNodes = inject('redisClusterNodes');

function describeWithCluster() {
  if (clusterNodes) return describe;
  console.warn('\n  [skipped] Redis Cluster tests: install redis-server (or set REDIS_SERVER_PATH) to run them against a local cluster\n');
  return describe.skip;
}

/** `describe` when the run started a Redis Cluster, a visibly announced skip otherwise. */
export const describeRedisCluster = describeWithCluster();

/** A connected ioredis Cluster on the run's cluster for the suite it is called in; read `client` inside tests and hooks only. */
export function useRedisCluster(): { readonly client: Cluster } {
  let client: Cluster | undefined;
  beforeAll(async () => {
    client = new Cluster(clusterNodes!.split(','), { redisOptions: { maxRetriesPerRequest: 1 }, lazyConnect: true });
    await client.connect();
  });
  afterAll(() => client?.quit());
  return {
    get client() {
      if (client === undefined) throw new Error('the Redis Cluster client is not connected yet: use it inside tests and hooks');
      return client;
    },
  };
}
