/**
 * What `ready()` does with a store's connection before the first request (docs/deployment.md#start):
 * a pg pool opens its connections, so the first burst of calls does not pay for them; an ioredis
 * client or Cluster that is still connecting is waited for, whatever its offline-queue settings.
 * Both within START_DEADLINE_MS. A store that is really down is named with its address and the
 * error, never with credentials: "Redis at 127.0.0.1:6399 refused the connection (ECONNREFUSED)".
 *
 * Memoised per client object: the OAuth and the quota store usually share one pool or client.
 */
import { connect as tcpConnect } from 'node:net';
import type { PgQueryable, RedisLike } from './store-clients.js';
import { laneOfPool, type StoreLane } from './store-lane.js';

/** How long `ready()` waits for a store's connections. */
export const START_DEADLINE_MS = 10_000;

export interface StoreConnection {
  /** Where the store is, without credentials: `Redis at 127.0.0.1:6379`. */
  readonly label: string;
  /** The local queue in front of a pool's connections; none for Redis, whose one connection pipelines. */
  readonly lane?: StoreLane;
  /** Opens or waits for the connections; rejects with an error naming the address and the cause. */
  warm(deadlineMs?: number): Promise<void>;
}

/** Failures that say nobody is there: waiting longer changes nothing at start. */
const DECISIVE: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ENOTFOUND: 'has a host name that does not resolve',
  EAI_AGAIN: 'has a host name that does not resolve',
  EHOSTUNREACH: 'cannot be reached',
  ENETUNREACH: 'cannot be reached',
};

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** "<label> refused the connection (ECONNREFUSED)", or the error's own words. */
export function describeFailure(label: string, error: unknown): string {
  const code = codeOf(error);
  if (code && DECISIVE[code]) return `${label} ${DECISIVE[code]} (${code})`;
  const message = error instanceof Error ? error.message : String(error);
  return `${label}: ${message}${code && !message.includes(code) ? ` (${code})` : ''}`;
}

function withDeadline<T>(work: Promise<T>, deadlineMs: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), deadlineMs);
    timer.unref?.();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function memoised(build: () => StoreConnection['warm']): StoreConnection['warm'] {
  let warming: Promise<void> | undefined;
  const warm = build();
  return (deadlineMs) => {
    warming ??= warm(deadlineMs).catch((error: unknown) => {
      warming = undefined; // the next ready() or request tries again
      throw error;
    });
    return warming;
  };
}

const connections = new WeakMap<object, StoreConnection>();

/** One connection per client object, built by `make` the first time: the OAuth and the quota store usually share a pool or client. */
function onePer<C extends object>(client: C, make: (client: C) => StoreConnection): StoreConnection {
  let connection = connections.get(client);
  if (!connection) connections.set(client, (connection = make(client)));
  return connection;
}

// ---- PostgreSQL -------------------------------------------------------------------------

interface PgPoolShape {
  connect?(): Promise<{ release(error?: Error | boolean): void }>;
  options?: { host?: unknown; port?: unknown; database?: unknown; connectionString?: unknown; max?: unknown };
}

function pgLabel(pool: PgPoolShape): string {
  const options = pool.options ?? {};
  let host = typeof options.host === 'string' ? options.host : undefined;
  let port = typeof options.port === 'number' || typeof options.port === 'string' ? String(options.port) : undefined;
  let database = typeof options.database === 'string' ? options.database : undefined;
  if (typeof options.connectionString === 'string') {
    try {
      // Host, port and database only: the user and password stay out of every message.
      const url = new URL(options.connectionString);
      host ??= url.hostname || undefined;
      port ??= url.port || undefined;
      database ??= decodeURIComponent(url.pathname.slice(1)) || undefined;
    } catch {
      // not a URL (a key=value string): the address stays unnamed
    }
  }
  const address = `${host ?? process.env.PGHOST ?? 'localhost'}:${port ?? process.env.PGPORT ?? '5432'}`;
  return `PostgreSQL at ${address}${database ? `/${database}` : ''}`;
}

/** A pg pool (or client): opens `max` connections at start and queues calls for them in a lane. */
export function pgConnection(pool: PgQueryable): StoreConnection {
  return onePer(pool, newPgConnection);
}

function newPgConnection(pool: PgQueryable): StoreConnection {
  const shape = pool as PgQueryable & PgPoolShape;
  const label = pgLabel(shape);
  const lane = laneOfPool(pool);
  const open = async (): Promise<void> => {
    if (!lane || typeof shape.connect !== 'function') {
      await pool.query('SELECT 1');
      return;
    }
    const clients = await Promise.allSettled(Array.from({ length: lane.width }, () => shape.connect!()));
    for (const client of clients) if (client.status === 'fulfilled') client.value.release();
    const failed = clients.find((client) => client.status === 'rejected');
    if (failed) throw failed.reason;
  };
  const warm = memoised(() => (deadlineMs = START_DEADLINE_MS) =>
    withDeadline(open(), deadlineMs, () => new Error(`${label} did not open its connections within ${deadlineMs} ms`)).catch((error: unknown) => {
      throw new Error(describeFailure(label, error), { cause: error });
    }),
  );
  return { label, ...(lane ? { lane } : {}), warm };
}

// ---- Redis ------------------------------------------------------------------------------

interface RedisShape {
  status?: unknown;
  isCluster?: unknown;
  options?: { host?: unknown; port?: unknown; path?: unknown };
  startupNodes?: unknown;
  connect?(): Promise<void>;
  on?(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener?(event: string, listener: (...args: unknown[]) => void): unknown;
}

function nodeAddress(node: unknown): string {
  if (typeof node === 'string' || typeof node === 'number') return String(node);
  const { host, port } = (node ?? {}) as { host?: unknown; port?: unknown };
  return `${typeof host === 'string' ? host : 'localhost'}:${typeof port === 'number' || typeof port === 'string' ? port : 6379}`;
}

function redisLabel(client: RedisShape): string {
  if (client.isCluster === true) {
    const nodes = Array.isArray(client.startupNodes) ? client.startupNodes.map(nodeAddress).join(', ') : 'its startup nodes';
    return `Redis Cluster at ${nodes}`;
  }
  const options = client.options ?? {};
  if (typeof options.path === 'string') return `Redis at ${options.path}`;
  return `Redis at ${nodeAddress({ host: options.host ?? '127.0.0.1', port: options.port ?? 6379 })}`;
}

/** What a plain TCP connection to `node` meets: undefined when something listens there. */
function probe(node: unknown): Promise<unknown> {
  const [host, port] = nodeAddress(node).split(/:(?=\d+$)/);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: host ?? 'localhost', port: Number(port) });
    socket.setTimeout(1000, () => socket.destroy(new Error('no answer within 1000 ms')));
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', resolve);
  });
}

/** The node error behind a Cluster's "Failed to refresh slots cache". */
function underlying(error: unknown): unknown {
  const last = (error as { lastNodeError?: unknown } | undefined)?.lastNodeError;
  return last ?? error;
}

/** Resolves at the client's 'ready'; rejects at a decisive failure, at 'end', or at the deadline with the last error. */
function whenReady(client: RedisShape, label: string, deadlineMs: number): Promise<void> {
  if (client.status === 'ready' || typeof client.on !== 'function' || typeof client.status !== 'string') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let lastError: unknown;
    const listeners: [string, (...args: unknown[]) => void][] = [];
    const nodes = new Set<RedisShape>();
    const done = (error?: Error) => {
      clearTimeout(timer);
      for (const [event, listener] of listeners) client.removeListener?.(event, listener);
      for (const node of nodes) node.removeListener?.('error', onError);
      if (error) reject(error);
      else resolve();
    };
    const onError = (error: unknown) => {
      lastError = underlying(error);
      const code = codeOf(lastError);
      if (code && DECISIVE[code]) done(new Error(describeFailure(label, lastError), { cause: lastError }));
      else if (lastError instanceof Error && /NOAUTH|WRONGPASS|invalid password/i.test(lastError.message)) done(new Error(describeFailure(label, lastError), { cause: lastError }));
    };
    const listen = (event: string, listener: (...args: unknown[]) => void) => {
      listeners.push([event, listener]);
      client.on!(event, listener);
    };
    listen('ready', () => done());
    listen('error', onError);
    listen('node error', onError);
    // A Cluster reports a node it could not reach as "Connection is closed": the node's own
    // client knows why (ECONNREFUSED).
    // ioredis says only "Connection is closed" of a Cluster node it could not reach; a plain
    // connection to the startup nodes, once, tells whether nobody is there.
    let probed = false;
    const probeStartupNodes = () => {
      if (probed || client.isCluster !== true || !Array.isArray(client.startupNodes) || client.startupNodes.length === 0) return;
      probed = true;
      void Promise.all(client.startupNodes.map(probe)).then((errors) => {
        const decisive = errors.every((error) => DECISIVE[codeOf(error) ?? '']);
        if (decisive) done(new Error(describeFailure(label, errors[0]), { cause: errors[0] }));
      });
    };
    listen('error', probeStartupNodes);
    listen('+node', (node) => {
      const shape = node as RedisShape;
      if (typeof shape?.on !== 'function') return;
      nodes.add(shape);
      shape.on('error', onError);
    });
    listen('end', () => done(new Error(lastError ? describeFailure(label, lastError) : `${label}: the client was closed`, { cause: lastError })));
    const timer = setTimeout(() => {
      const why = lastError ? `; last error: ${describeFailure(label, lastError)}` : '';
      done(new Error(`${label} was not ready within ${deadlineMs} ms${why}`, { cause: lastError }));
    }, deadlineMs);
    timer.unref?.();
    if (client.status === 'end') done(new Error(`${label}: the client was closed (quit() or disconnect() was called)`));
    // lazyConnect: nothing connects until asked.
    else if (client.status === 'wait') client.connect?.().catch(onError);
  });
}

/**
 * A Cluster is ready once it knows the slots; it connects to each master at its first command.
 * Connected here, the first burst of calls does not pay for it.
 */
async function connectMasters(client: RedisShape, label: string, deadlineMs: number): Promise<void> {
  const nodes = (client as { nodes?(role: string): RedisShape[] }).nodes?.('master') ?? [];
  await Promise.all(nodes.map((node) => whenReady(node, label, deadlineMs)));
}

/** An ioredis client or Cluster: `ready()` waits for it to be connected. */
export function redisConnection(client: RedisLike): StoreConnection {
  return onePer(client, newRedisConnection);
}

function newRedisConnection(client: RedisLike): StoreConnection {
  const shape = client as RedisLike & RedisShape;
  const label = redisLabel(shape);
  const warm = memoised(() => async (deadlineMs = START_DEADLINE_MS) => {
    await whenReady(shape, label, deadlineMs);
    if (shape.isCluster === true) await connectMasters(shape, label, deadlineMs);
  });
  return { label, warm };
}
