/**
 * Load is not an outage on PostgreSQL and Redis: the burst of test/http/load-burst.ts, two cold
 * processes behind a slow proxy on a loaded machine, admits exactly the limit with no 5xx.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { databaseUrl, describePostgres, describeRedis, redisUrl } from '../support/services.js';
import { hostPort, startTcpProxy, viaProxy } from '../support/tcp-proxy.js';
import { DELAY, describeBurst } from './load-burst.js';

describeBurst('PostgreSQL', describePostgres, async (label) => {
  const url = databaseUrl as string;
  const proxy = await startTcpProxy(hostPort(url, 5432), DELAY);
  return {
    env: { BURST_STORE: 'postgres', DATABASE_URL: viaProxy(url, proxy), BURST_NAME: label },
    proxies: [proxy],
    async teardown() {
      await proxy.close();
      const direct = new pg.Client({ connectionString: url });
      await direct.connect();
      await direct.query(`DROP SCHEMA IF EXISTS "${label}" CASCADE`);
      await direct.end();
    },
  };
});

async function dropKeys(client: Redis, label: string): Promise<void> {
  let cursor = '0';
  for (let i = 0; i < 1000; i++) {
    const [next, keys] = await client.scan(cursor, 'MATCH', `*${label}*`, 'COUNT', 1000);
    for (const key of keys) await client.del(key);
    cursor = next;
    if (cursor === '0') break;
  }
}

describeBurst('Redis', describeRedis, async (label) => {
  const url = redisUrl as string;
  const proxy = await startTcpProxy(hostPort(url, 6379), DELAY);
  return {
    env: { BURST_STORE: 'redis', REDIS_URL: viaProxy(url, proxy), BURST_NAME: label },
    proxies: [proxy],
    async teardown() {
      await proxy.close();
      const direct = new Redis(url);
      await dropKeys(direct, label);
      await direct.quit();
    },
  };
});

