/**
 * A private Redis Cluster for the store tests, one per test run: this module is the global setup
 * of the `cluster` project (vitest.config.ts), and hands the nodes to its test files with
 * `provide` (read them with test/support/redis-cluster-suite.ts). Three masters started from the
 * `redis-server` binary on free ports of 127.0.0.1, no replicas, nothing persisted (`--save ''
 * --appendonly no`), node files in a temporary directory. The slots are assigned and the nodes
 * introduced with CLUSTER ADDSLOTS / CLUSTER MEET, then every node is asked until it reports
 * `cluster_state:ok`. `stop()` ends every process and removes the directory; a run that exits
 * without its teardown still kills the processes.
 *
 * The gate follows test/support/services.ts: with REDIS_URL set (CI) or REQUIRE_SERVICES=1 a
 * missing binary fails the run; otherwise nothing starts and the suites are skipped with a
 * visible message.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';

const SLOTS = 16_384;
const MASTERS = 3;
/** Redis Cluster talks between nodes on the client port + 10000. */
const BUS_OFFSET = 10_000;

function findRedisServer(): string | undefined {
  const explicit = process.env.REDIS_SERVER_PATH;
  if (explicit) return existsSync(explicit) ? explicit : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'redis-server');
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

const redisServer = findRedisServer();

export interface RedisCluster {
  /** `host:port,host:port,...`, as REDIS_CLUSTER_NODES takes them. */
  readonly nodeList: string;
  /** Ends every node and removes the directory. */
  stop(): Promise<void>;
}


async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return true;
  } catch {
    return false;
  } finally {
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A random client port in 20000-29999 whose bus port (30000-39999) is free too: far from 6379. */
async function freeNodePort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + randomInt(10_000);
    if (!taken.has(port) && (await portIsFree(port)) && (await portIsFree(port + BUS_OFFSET))) return port;
  }
  throw new Error('no free port pair for a Redis Cluster node');
}

interface NodeProcess {
  port: number;
  child: ChildProcess;
  output(): string;
}

function startNode(binary: string, dir: string, port: number, deadline: number, spawned: Set<NodeProcess>): Promise<NodeProcess> {
  const child = spawn(
    binary,
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--cluster-enabled', 'yes',
      '--cluster-config-file', `nodes-${port}.conf`,
      '--cluster-node-timeout', '5000',
      '--dir', dir,
      '--save', '',
      '--appendonly', 'no',
      '--daemonize', 'no',
      '--logfile', '',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const node: NodeProcess = { port, child, output: () => output };
  spawned.add(node);
  return new Promise<NodeProcess>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`redis-server on port ${port} was not ready in time`)), Math.max(0, deadline - Date.now()));
    const onData = () => {
      if (!output.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      resolve(node);
    };
    const onExit = (code: number | null) => fail(new Error(`redis-server on port ${port} exited with ${code}`));
    function fail(error: Error): void {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      reject(new Error(`${error.message}; its output:\n${output.slice(-2000)}`));
    }
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
    child.once('error', (error) => fail(error));
  });
}

/** A node on a free port; a port taken between the probe and the bind means another try. */
async function startNodeOnFreePort(binary: string, dir: string, deadline: number, taken: Set<number>, spawned: Set<NodeProcess>): Promise<NodeProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freeNodePort(taken);
    taken.add(port);
    try {
      return await startNode(binary, dir, port, deadline, spawned);
    } catch (error) {
      if (attempt === 3 || !/Address already in use/.test((error as Error).message)) throw error;
    }
  }
}

async function stopNode(node: NodeProcess): Promise<void> {
  const { child } = node;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(killer);
}

/** `field:value` lines of CLUSTER INFO. */
function clusterInfo(text: string): Record<string, string> {
  return Object.fromEntries(text.split('\r\n').filter(Boolean).map((line) => line.split(':') as [string, string]));
}

async function until(deadline: number, what: string, check: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`the Redis Cluster did not reach ${what} in time`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Starts the cluster within `timeoutMs`; on any failure stops what it started before rethrowing. */
export async function startRedisCluster(timeoutMs = 20_000): Promise<RedisCluster> {
  if (!redisServer) throw new Error('no redis-server binary on PATH (or REDIS_SERVER_PATH)');
  const deadline = Date.now() + timeoutMs;
  const dir = await mkdtemp(join(tmpdir(), 'cp-redis-cluster-'));
  const spawned = new Set<NodeProcess>();
  let processes: NodeProcess[] = [];
  const admins: Redis[] = [];
  const killAll = () => {
    for (const node of spawned) node.child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const stop = async () => {
    for (const admin of admins) admin.disconnect();
    await Promise.all([...spawned].map(stopNode));
    process.removeListener('exit', killAll);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const taken = new Set<number>();
    const starting = await Promise.allSettled(Array.from({ length: MASTERS }, () => startNodeOnFreePort(redisServer, dir, deadline, taken, spawned)));
    for (const result of starting) if (result.status === 'rejected') throw result.reason;
    processes = starting.map((result) => (result as PromiseFulfilledResult<NodeProcess>).value);

    for (const { port } of processes) admins.push(new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, lazyConnect: true }));
    await Promise.all(admins.map((admin) => admin.connect()));

    // An even share of the slots per master, then the handshake: every node meets the first.
    const share = Math.ceil(SLOTS / MASTERS);
    await Promise.all(
      admins.map((admin, i) => {
        const slots = Array.from({ length: Math.min(share, SLOTS - i * share) }, (_, k) => i * share + k);
        return admin.call('CLUSTER', 'ADDSLOTS', ...slots.map(String));
      }),
    );
    for (const { port } of processes.slice(1)) await admins[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(port));
    await until(deadline, 'cluster_state:ok on every node', async () => {
      const infos = await Promise.all(admins.map(async (admin) => clusterInfo(String(await admin.call('CLUSTER', 'INFO')))));
      return infos.every((info) => info.cluster_state === 'ok' && info.cluster_slots_ok === String(SLOTS) && info.cluster_known_nodes === String(MASTERS));
    });
  } catch (error) {
    const output = [...spawned].map((node) => `--- redis-server :${node.port}\n${node.output().slice(-1000)}`).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error });
  }

  return { nodeList: processes.map(({ port }) => `127.0.0.1:${port}`).join(','), stop };
}

/**
 * The global setup: starts the cluster and provides its nodes as `redisClusterNodes`; the
 * returned teardown stops it after the last test file of the run.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!redisServer) {
    if (process.env.REDIS_URL || process.env.REQUIRE_SERVICES === '1') {
      throw new Error('no redis-server binary on PATH (or REDIS_SERVER_PATH) but REDIS_URL is set: the Redis Cluster tests must run (apt-get install redis-server)');
    }
    return undefined;
  }
  const cluster = await startRedisCluster();
  project.provide('redisClusterNodes', cluster.nodeList);
  return () => cluster.stop();
}

/** Every key of one node matching a pattern, with SCAN (KEYS would block the node). */
export { scanKeys } from '../../src/core/redis-scan.js';
