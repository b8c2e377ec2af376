/**
 * Real Redis and PostgreSQL for store tests. CI sets REDIS_URL / DATABASE_URL and
 * REQUIRE_SERVICES=1, so a missing server fails the run; on a laptop without those variables the
 * suites are skipped with a visible message instead.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe } from 'vitest';

export const redisUrl = process.env.REDIS_URL;
export const databaseUrl = process.env.DATABASE_URL;
const required = process.env.REQUIRE_SERVICES === '1';

/** A name no other test run uses: key prefixes and schemas are made from it. */
export function uniqueName(label: string): string {
  return `cp_${label}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

function describeWith(service: string, url: string | undefined, variable: string) {
  if (url) return describe;
  if (required) throw new Error(`${variable} is not set but REQUIRE_SERVICES=1: the ${service} tests must run`);
  console.warn(`\n  [skipped] ${service} tests: set ${variable} to run them against a real server\n`);
  return describe.skip;
}

/** `describe` when REDIS_URL is set, a visibly announced skip otherwise. */
export const describeRedis = describeWith('Redis', redisUrl, 'REDIS_URL');
/** `describe` when DATABASE_URL is set, a visibly announced skip otherwise. */
export const describePostgres = describeWith('PostgreSQL', databaseUrl, 'DATABASE_URL');

/** A test's clean-up of the shared Redis: deletes every key holding `prefix`, then closes the connection. */
export async function dropPrefix(client: Redis, prefix: string): Promise<void> {
  const keys = await client.keys(`*${prefix}*`);
  if (keys.length > 0) await client.del(...keys);
  await client.quit();
}

/** Inside a `describeRedis` block: a connection and a prefix of its own, both gone after the block. */
export function redisForBlock(label: string): { client: Redis; prefix: string } {
  const client = new Redis(redisUrl!);
  const prefix = uniqueName(label);
  afterAll(() => dropPrefix(client, prefix));
  return { client, prefix };
}
