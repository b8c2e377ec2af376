/**
 * The Redis and PostgreSQL clients the stores (OAuth and quota) take, typed by what they call.
 * An ioredis `Redis` or `Cluster` and a `pg.Pool` fit as they are (the type tests check them);
 * so does any client with the same signatures. Structural, so ioredis and pg stay optional peer
 * dependencies: nothing here imports them.
 */

/**
 * Rows one statement of a long PostgreSQL operation touches (a client's deletion, a usage reset
 * or listing, the OAuth store's clean-up): about 50 ms of the server's time, well within any
 * store deadline, where one statement over millions of rows could outlast the pool's
 * query_timeout (docs/deployment.md) and be taken for an outage.
 */
export const PG_CHUNK_ROWS = 10_000;

/** The Redis commands the stores send: an ioredis `Redis` or `Cluster`. */
export interface RedisLike {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
  mget(...keys: string[]): Promise<(string | null)[]>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  hset(key: string, field: string, value: string): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
  hdel(key: string, ...fields: string[]): Promise<number>;
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** ioredis's pipeline: when there, the quota store sends calls that arrive together in one write. */
  pipeline?(): RedisPipelineLike;
  /** True on an ioredis Cluster, whose pipelines must stay in one slot: there every call goes alone. */
  readonly isCluster?: boolean;
}

export interface RedisPipelineLike {
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): unknown;
  exec(): Promise<[error: Error | null, result: unknown][] | null>;
}

export interface PgQueryResultLike {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/**
 * Anything that runs a parameterised query: a `pg.Pool`, a `pg.Client`, a `PoolClient`. A call
 * without `values` may hold several statements (pg's simple query protocol); the migrations rely
 * on that to run in one implicit transaction on one connection.
 */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<PgQueryResultLike>;
}

/** A checked-out connection: `pg.PoolClient` fits. */
export interface PgClientLike extends PgQueryable {
  /** `release(error)` destroys the connection instead of returning it to the pool. */
  release(error?: Error | boolean): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A `pg.Pool` fits. The stores never end it. */
export interface PgPoolLike extends PgQueryable {
  connect(): Promise<PgClientLike>;
}
