/**
 * Building blocks of the option schemas every part shares, so a function, a path or a logger is
 * checked (and described) the same way wherever it appears.
 */
import { z } from 'zod';
import type { Logger } from './logger.js';

export const functionOption = <T>(what = 'a function') => z.custom<T>((value) => typeof value === 'function', { message: `must be ${what}` });

export const nonEmptyText = z.string().min(1);

export const positiveInteger = z.number().int().positive();

export const countOption = z.number().int().min(0);

/** Where a part answers, relative to the mount point: `/oauth`, `/api/courier`. */
export const basePathOption = z.string().regex(/^\/[A-Za-z0-9/_.-]*[^/]$/, 'must be a path that starts with / and does not end with /');

export const httpUrlOption = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });

/**
 * An object with these methods (a store, a rule source): checked by shape, so any implementation
 * fits. `instead` may name what the value is and what to write, for a likely mix-up (a database
 * client given where a store belongs).
 *
 * A value without the methods ends the check (`continue: false`), as a wrong type does: in a
 * union (`rules: [...] | RuleSource`) a refinement that let it go on would be the one branch zod
 * reports, and a rule list with one bad field would read "must be a rule source".
 */
export function objectWith<T>(methods: readonly string[], what: string, instead?: (value: unknown) => string | undefined) {
  return z.custom<T>().superRefine((value, ctx) => {
    const fits = typeof value === 'object' && value !== null && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
    if (!fits) ctx.addIssue({ code: 'custom', message: instead?.(value) ?? `must be ${what} (with ${methods.map((m) => `${m}()`).join(', ')})`, continue: false });
  });
}

/** The client libraries whose connections the Redis and PostgreSQL stores are built from (docs/stores.md). */
export type DatabaseClient = 'redis' | 'postgres';

/** An ioredis `Redis` or `Cluster` (what createRedis*Store take as `client`), or a pg `Pool` or `Client` (`pool`). */
function databaseClientOf(value: unknown): DatabaseClient | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const has = (name: string) => typeof (value as Record<string, unknown>)[name] === 'function';
  if (has('evalsha') && has('get')) return 'redis';
  if (has('query') && has('connect')) return 'postgres';
  return undefined;
}

/** A store option: a Redis or PostgreSQL client in its place is answered with the factory that wraps it. */
export function storeOption<T>(methods: readonly string[], what: string, factories: Record<DatabaseClient, string>) {
  return objectWith<T>(methods, what, (value) => {
    const client = databaseClientOf(value);
    if (client === 'redis') return `is a Redis client (ioredis), not ${what}: write \`store: ${factories.redis}({ client })\`, imported from 'courier-platform'`;
    if (client === 'postgres') return `is a PostgreSQL client (pg), not ${what}: write \`store: ${factories.postgres}({ pool })\`, imported from 'courier-platform'`;
    return undefined;
  });
}

export const loggerOption = objectWith<Logger>(['debug', 'info', 'warn', 'error'], 'a logger');
