/**
 * Where the demo's sign-in sessions live: process memory, or the deployment's Redis or
 * PostgreSQL so that every example process behind one PUBLIC_URL sees the same sessions, and a
 * sign-out in one of them ends the session in all. Keys are the SHA-256 of the cookie's session
 * id: a copy of the store does not hand out cookies that sign anyone in.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** What a signed-in session holds. */
export interface SessionData {
  sub: string;
  /** When the user typed the password, in seconds since the epoch (the OIDC `auth_time`). */
  auth_time: number;
}

export interface SessionStore {
  get(id: string): Promise<SessionData | undefined>;
  set(id: string, data: SessionData, ttlSeconds: number): Promise<void>;
  delete(id: string): Promise<void>;
}

const keyOf = (id: string) => createHash('sha256').update(id).digest('base64url');

export function createMemorySessionStore(now: () => number = Date.now): SessionStore {
  // Every session lives equally long, so insertion order is expiry order: sweeping from the front
  // on each write keeps the map as small as the sessions still alive.
  const sessions = new Map<string, { data: SessionData; expiresAt: number }>();
  return {
    async get(id) {
      const entry = sessions.get(keyOf(id));
      return entry && entry.expiresAt > now() ? entry.data : undefined;
    },
    async set(id, data, ttlSeconds) {
      for (const [key, entry] of sessions) {
        if (entry.expiresAt > now()) break;
        sessions.delete(key);
      }
      sessions.set(keyOf(id), { data, expiresAt: now() + ttlSeconds * 1000 });
    },
    async delete(id) {
      sessions.delete(keyOf(id));
    },
  };
}

/** The commands the Redis store sends; an ioredis `Redis` or `Cluster` fits. */
export interface SessionRedis {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, expiryMode: 'EX', seconds: number): Promise<unknown>;
  del(key: string): Promise<number>;
}

export function createRedisSessionStore(redis: SessionRedis, prefix = 'example:session:'): SessionStore {
  return {
    async get(id) {
      const json = await redis.get(prefix + keyOf(id));
      return json ? (JSON.parse(json) as SessionData) : undefined;
    },
    async set(id, data, ttlSeconds) {
      await redis.set(prefix + keyOf(id), JSON.stringify(data), 'EX', ttlSeconds);
    },
    async delete(id) {
      await redis.del(prefix + keyOf(id));
    },
  };
}

/** `table` may be schema-qualified; it is the deployment's own constant, never user input. */
export function createPostgresSessionStore(pool: pg.Pool, table = 'courier_example_sessions'): SessionStore {
  if (!/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/.test(table)) throw new TypeError(`session table name ${JSON.stringify(table)} is not a plain SQL name`);
  let created: Promise<unknown> | undefined;
  const ready = () =>
    (created ??= pool
      .query(`CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, data jsonb NOT NULL, expires_at timestamptz NOT NULL)`)
      .catch((error: { code?: string }) => {
        // Another process created it at the same moment: the table is there all the same.
        if (error.code === '23505' || error.code === '42P07') return;
        created = undefined;
        throw error;
      }));
  return {
    async get(id) {
      await ready();
      const { rows } = await pool.query<{ data: SessionData }>(`SELECT data FROM ${table} WHERE id = $1 AND expires_at > now()`, [keyOf(id)]);
      return rows[0]?.data;
    },
    async set(id, data, ttlSeconds) {
      await ready();
      await pool.query(`DELETE FROM ${table} WHERE expires_at <= now()`);
      await pool.query(
        `INSERT INTO ${table} (id, data, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
         ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
        [keyOf(id), JSON.stringify(data), ttlSeconds],
      );
    },
    async delete(id) {
      await ready();
      await pool.query(`DELETE FROM ${table} WHERE id = $1`, [keyOf(id)]);
    },
  };
}
