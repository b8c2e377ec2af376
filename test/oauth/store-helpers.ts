/**
 * The clock, the refresh step and the Redis key clean-up the OAuthStore tests of each backend share.
 */
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import { scanKeys as scanMatching } from '../../src/core/redis-scan.js';
import type { OAuthStore } from '../../src/oauth/store/index.js';
import { BASE_TIME, nextTokens } from './store-conformance.js';

/** A clock the test moves by hand. */
export function testClock() {
  const clock = { now: BASE_TIME, read: () => clock.now };
  return clock;
}

/** Starts a grant and performs one refresh the way the token endpoint does: read the token, then rotate. */
export async function refreshOnce(store: OAuthStore, presented: { grantId: string; hash: string }) {
  const tokens = nextTokens(presented.grantId);
  expect((await store.findRefreshToken(presented))?.consumed).toBe(false);
  return { tokens, outcome: await store.rotateRefreshToken(presented, tokens) };
}

/** Deletes every key under a prefix (SCAN, never KEYS: the server is shared). */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  for (const key of await scanKeys(client, prefix)) await client.del(key);
}

/** Every key under `prefix`. */
export const scanKeys = (client: Redis, prefix: string): Promise<string[]> => scanMatching(client, `${prefix}*`);
