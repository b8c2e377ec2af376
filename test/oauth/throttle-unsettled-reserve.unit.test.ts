/**
 * An attempt nobody was answered for gives back every key it sent a reservation for without
 * waiting for those reservations to settle (docs/oauth.md, "Brute-force limits"): a client may
 * hold a command it never settles (a connection dropped, with no resend), and a count that
 * reaches the store after its give-back counts nothing.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { StoreUnavailableError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { createStoreGuard } from '../../src/core/store-guard.js';
import { failureWindows, type FailureWindows } from '../../src/oauth/failure-windows.js';
import { countFailures, guardedThrottle } from '../../src/oauth/throttle.js';

const keys = [
  { kind: 'ip', id: '192.0.2.1' },
  { kind: 'pair', id: '192.0.2.1 app' },
];
const stored = (kind: string, id: string) => createHash('sha256').update(`${kind}:${id}`).digest('base64url');
const limits = { ip: 10, pair: 1 };

/** Windows in memory whose reservations on `silentKey` never settle while `silent.on`: each is held, to land when the test says. */
function silentOn(silentKey: string) {
  const windows = failureWindows(undefined, 'unsettled', 60_000);
  const silent = { on: true };
  const held: (() => Promise<unknown>)[] = [];
  const givenBack: string[] = [];
  const store: FailureWindows = {
    windowMs: windows.windowMs,
    peek: (key) => windows.peek(key),
    reserve(key, attemptId) {
      if (!silent.on || key !== silentKey) return windows.reserve(key, attemptId);
      held.push(() => windows.reserve(key, attemptId));
      return new Promise(() => {});
    },
    async giveBack(key, attemptId) {
      givenBack.push(key);
      await windows.giveBack(key, attemptId);
    },
  };
  return { windows, store, silent, held, givenBack };
}

describe('guardedThrottle: a reservation the store never answers', () => {
  it('fails the attempt with a 503 at the deadline and gives back each key it reserved at once; the count, landing later, counts nothing', async () => {
    const { windows, store, silent, held, givenBack } = silentOn(stored('pair', '192.0.2.1 app'));
    const guard = createStoreGuard({ name: 'silent store', timeoutMs: 50, logger: silentLogger });
    const throttle = guardedThrottle(countFailures(limits, store), guard);
    await expect(throttle.attempt(keys)).rejects.toThrow(StoreUnavailableError);
    // The reservation on the pair is still unsettled, and both keys are given back all the same.
    expect(held).toHaveLength(1);
    await vi.waitFor(() => expect([...givenBack].sort()).toEqual([stored('ip', '192.0.2.1'), stored('pair', '192.0.2.1 app')].sort()), { timeout: 2000, interval: 20 });
    expect(await windows.peek(stored('ip', '192.0.2.1'))).toBeNull();
    // The held count reaches the store after its give-back: it counts nothing.
    silent.on = false;
    await held.shift()!();
    expect(await windows.peek(stored('pair', '192.0.2.1 app'))).toBeNull();
    // The pair (limit 1) holds no failure: a wrong secret still checks, the next is refused.
    expect((await throttle.attempt(keys)).retryAfter).toBe(0);
    expect((await throttle.attempt(keys)).retryAfter).toBeGreaterThan(0);
  });
});
