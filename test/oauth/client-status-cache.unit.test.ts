/**
 * The client records each process keeps (docs/deployment.md): read from the store at most every
 * `STATUS_TTL_MS` on the platform's clock, forgotten at once after a change made here, and at
 * most 10,000 of them, the least recently used going first.
 */
import { describe, expect, it } from 'vitest';
import { clientStatusCache, STATUS_TTL_MS } from '../../src/oauth/client-status.js';
import type { OAuthClientRecord } from '../../src/oauth/store/types.js';

function countingStore() {
  const reads: string[] = [];
  const getClient = async (id: string): Promise<OAuthClientRecord | undefined> => {
    reads.push(id);
    return id.startsWith('unknown') ? undefined : { id, name: id, redirectUris: [], scopes: ['openid'], grants: ['client_credentials'] };
  };
  return { reads, getClient };
}

function clock() {
  let at = Date.UTC(2031, 4, 12, 8, 30, 0);
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

describe('clientStatusCache', () => {
  it('reads a client, known or not, once within STATUS_TTL_MS and again once it has passed', async () => {
    const store = countingStore();
    const time = clock();
    const status = clientStatusCache(store.getClient, time.now);
    expect((await status.record('shop'))?.id).toBe('shop');
    expect(await status.record('unknown-1')).toBeUndefined();
    time.advance(STATUS_TTL_MS - 1);
    await status.record('shop');
    await status.record('unknown-1');
    expect(store.reads).toEqual(['shop', 'unknown-1']);
    time.advance(1);
    await status.record('shop');
    expect(store.reads).toEqual(['shop', 'unknown-1', 'shop']);
  });

  it('forgets a client at once after a change made in this process', async () => {
    const store = countingStore();
    const status = clientStatusCache(store.getClient, clock().now);
    await status.record('shop');
    status.forget('shop');
    await status.record('shop');
    expect(store.reads).toEqual(['shop', 'shop']);
  });

  it('past 10,000 other clients, the active client is not read again; an idle one is', async () => {
    const store = countingStore();
    const status = clientStatusCache(store.getClient, clock().now);
    await status.record('active');
    await status.record('idle');
    for (let i = 0; i < 10_500; i++) {
      await status.record(`client-${i}`);
      if (i % 1000 === 0) await status.record('active');
    }
    const before = store.reads.length;
    await status.record('active');
    expect(store.reads.length).toBe(before);
    await status.record('idle');
    expect(store.reads.slice(before)).toEqual(['idle']);
  });
});
