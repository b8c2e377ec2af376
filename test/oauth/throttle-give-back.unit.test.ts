/**
 * A give-back the store fails is tried again through the store guard (docs/oauth.md, "Brute-force
 * limits"): for as long as the window it was counted in lasts, however often a breaking
 * connection fails it, never at once, and never after that window has ended.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { StoreBusyError } from '../../src/core/store-errors.js';
import { PROBE_LONGEST_PAUSE_MS } from '../../src/core/retry-when-back.js';
import { createStoreGuard } from '../../src/core/store-guard.js';
import { createStoreLane } from '../../src/core/store-lane.js';
import { failureWindows, type FailureWindows } from '../../src/oauth/failure-windows.js';
import { countFailures, guardedThrottle, MAX_PENDING_GIVE_BACKS } from '../../src/oauth/throttle.js';

const keys = [
  { kind: 'ip', id: '192.0.2.1' },
  { kind: 'pair', id: '192.0.2.1 app' },
];
const limits = { ip: 10, pair: 2 };

/** Windows in memory whose give-backs fail with `failure()` while it answers an error. */
function failingGiveBacks(failure: () => Error | undefined) {
  const windows = failureWindows(undefined, 'give-back', 60_000);
  const tries = { count: 0 };
  const flaky: FailureWindows = {
    windowMs: windows.windowMs,
    peek: (key) => windows.peek(key),
    reserve: (key, attemptId) => windows.reserve(key, attemptId),
    async giveBack(key, attemptId) {
      tries.count++;
      const error = failure();
      if (error) throw error;
      await windows.giveBack(key, attemptId);
    },
  };
  return { tries, flaky, plain: countFailures(limits, windows) };
}

describe('guardedThrottle: give-backs the store failed', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a right secret whose give-back fails each time it is tried is still given back once one lands: the user is not locked out', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    // Eight tries in a row fail on both keys.
    let failures = 16;
    const { flaky, plain } = failingGiveBacks(() => (failures-- > 0 ? new Error('Connection terminated unexpectedly') : undefined));
    const guard = createStoreGuard({ name: 'flapping store', timeoutMs: 1000, logger: silentLogger });
    const throttle = guardedThrottle(countFailures(limits, flaky), guard, 'as-is');
    const right = await throttle.attempt(keys);
    expect(right.retryAfter).toBe(0);
    await expect(right.release()).rejects.toThrow();
    // The connection breaks again each time the store answers; a call of the process finds it
    // answering now and then, and the give-back is tried each time.
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(1000);
      if (guard.degraded) await guard.ask(async () => 'answered');
    }
    await vi.advanceTimersByTimeAsync(40_000);
    expect(failures).toBeLessThan(0);
    // Two wrong secrets are the limit of the pair: both still check, so nothing was left counted.
    for (let i = 0; i < 2; i++) expect((await plain.attempt(keys)).retryAfter).toBe(0);
    expect((await plain.attempt(keys)).retryAfter).toBeGreaterThan(0);
  });

  it('a process that makes no other store call still makes the give-backs an outage kept it from once the store is back, probing with one at a time meanwhile', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let down = true;
    const { tries, flaky, plain } = failingGiveBacks(() => (down ? new Error('Connection terminated unexpectedly') : undefined));
    const guard = createStoreGuard({ name: 'idle store', timeoutMs: 1000, logger: silentLogger });
    const throttle = guardedThrottle(countFailures(limits, flaky), guard, 'as-is');
    // Five users' right secrets, each on its own keys, whose give-backs the outage failed.
    const users = Array.from({ length: 5 }, (_, i) => [
      { kind: 'ip', id: `192.0.2.${i + 10}` },
      { kind: 'pair', id: `192.0.2.${i + 10} app` },
    ]);
    for (const names of users) {
      const right = await throttle.attempt(names);
      expect(right.retryAfter).toBe(0);
      await expect(right.release()).rejects.toThrow();
    }
    expect(guard.degraded).toBe(true);
    // Twenty seconds down: about twenty probes of one give-back each (two keys), not all five
    // give-backs at every probe.
    const before = tries.count;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(tries.count - before).toBeGreaterThan(0);
    expect(tries.count - before).toBeLessThanOrEqual(2 * 22);
    // Back, and this process makes no call of its own (the next attempts go to another one):
    // within a probe's pause the next probe lands, every give-back follows, and no right secret
    // left anything counted.
    down = false;
    await vi.advanceTimersByTimeAsync(PROBE_LONGEST_PAUSE_MS);
    expect(guard.degraded).toBe(false);
    for (const names of users) {
      for (let i = 0; i < 2; i++) expect((await plain.attempt(names)).retryAfter).toBe(0);
      expect((await plain.attempt(names)).retryAfter).toBeGreaterThan(0);
    }
  });

  it('a give-back that fails while the store is not down is tried again after a growing pause, never at once, and not once its window has ended', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { tries, flaky } = failingGiveBacks(() => new StoreBusyError('busy store', 'all of its connections are busy'));
    const guard = createStoreGuard({ name: 'busy store', timeoutMs: 1000, logger: silentLogger });
    const throttle = guardedThrottle(countFailures(limits, flaky), guard, 'as-is');
    const right = await throttle.attempt(keys);
    await expect(right.release()).rejects.toThrow(StoreBusyError);
    const first = tries.count;
    await vi.advanceTimersByTimeAsync(50);
    expect(tries.count).toBe(first);
    const seen: number[] = [];
    for (let ms = 0; ms < 70_000; ms += 50) {
      seen.push(tries.count);
      await vi.advanceTimersByTimeAsync(50);
    }
    const gaps = seen.reduce<number[]>((at, count, i) => (i > 0 && count > seen[i - 1]! ? [...at, i * 50] : at), []);
    const pauses = gaps.slice(1).map((at, i) => at - gaps[i]!);
    // Each pause at least as long as the one before: tens of tries in the 60 s window, not thousands.
    expect(gaps.length).toBeGreaterThan(5);
    expect(pauses.every((pause, i) => i === 0 || pause >= pauses[i - 1]!)).toBe(true);
    expect(gaps.length).toBeLessThan(20);
    expect(gaps.at(-1)!).toBeLessThanOrEqual(60_000);
    const ended = tries.count;
    await vi.advanceTimersByTimeAsync(600_000);
    expect(tries.count).toBe(ended);
  });

  it("a right secret's give-back stuck behind a busy pool holds its caller no longer than the store's deadline, and lands once a connection is free", async () => {
    const { flaky, plain } = failingGiveBacks(() => undefined);
    const lane = createStoreLane(1, 10_000);
    const guard = createStoreGuard({ name: 'busy pool', timeoutMs: 50, logger: silentLogger, lane });
    const throttle = guardedThrottle(countFailures(limits, flaky), guard, 'as-is');
    const right = await throttle.attempt(keys);
    // Another user of the pool holds its one connection for 600 ms: the give-back waits in the queue.
    const free = await lane.enter('another store');
    setTimeout(free, 600);
    const started = performance.now();
    await right.release();
    expect(performance.now() - started).toBeLessThan(400);
    // Given back after all: the pair's limit of two wrong secrets is whole.
    for (let i = 0; i < 2; i++) await vi.waitFor(async () => expect((await plain.attempt(keys)).retryAfter).toBe(0));
    expect((await plain.attempt(keys)).retryAfter).toBeGreaterThan(0);
  });

  it('a flood of attempts whose give-backs all fail holds at most MAX_PENDING_GIVE_BACKS retries, not one per attempt', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { flaky } = failingGiveBacks(() => new StoreBusyError('busy store', 'all of its connections are busy'));
    const guard = createStoreGuard({ name: 'busy store', timeoutMs: 1000, logger: silentLogger });
    const throttle = guardedThrottle(countFailures(limits, flaky), guard, 'as-is');
    // Every attempt from an address of its own, so none is refused before it counts.
    for (let i = 0; i < MAX_PENDING_GIVE_BACKS + 200; i++) {
      const attempt = await throttle.attempt([{ kind: 'ip', id: `198.51.${i >> 8}.${i & 255}` }]);
      await expect(attempt.release()).rejects.toThrow(StoreBusyError);
    }
    expect(vi.getTimerCount()).toBe(MAX_PENDING_GIVE_BACKS);
    // 10,200 attempts: seconds on a quiet machine, several times that on a loaded one.
  }, 60_000);

  it("strangers' refusals filling every place cannot crowd out a right secret's give-back: it takes the oldest one's place, and lands once the store takes give-backs again", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let failing = true;
    const givenBack = new Set<string>();
    const windows = failureWindows(undefined, 'give-back', 60_000);
    const flaky: FailureWindows = {
      windowMs: windows.windowMs,
      peek: (key) => windows.peek(key),
      reserve: (key, attemptId) => windows.reserve(key, attemptId),
      async giveBack(key, attemptId) {
        if (failing) throw new StoreBusyError('busy store', 'all of its connections are busy');
        givenBack.add(key);
        await windows.giveBack(key, attemptId);
      },
    };
    const guard = createStoreGuard({ name: 'busy store', timeoutMs: 1000, logger: silentLogger });
    const places = 100;
    const throttle = guardedThrottle(countFailures({ stranger: 1, user: 5 }, flaky), guard, 'as-is', places);
    // A stranger without any credential: two tries at once on each key, one refused past the
    // limit after counting, and that refusal's give-back fails.
    for (let i = 0; i < places; i++) {
      const key = [{ kind: 'stranger', id: `198.51.${i >> 8}.${i & 255}` }];
      const answers = await Promise.all([throttle.attempt(key), throttle.attempt(key)]);
      expect(answers.filter((answer) => answer.retryAfter > 0)).toHaveLength(1);
    }
    // The refusals' give-backs have failed by the time the first retry is due: every place is taken.
    await vi.advanceTimersByTimeAsync(1);
    expect(vi.getTimerCount()).toBe(places);
    const right = await throttle.attempt([{ kind: 'user', id: '192.0.2.1 demo' }]);
    await expect(right.release()).rejects.toThrow(StoreBusyError);
    failing = false;
    await guard.ask(async () => 'answered');
    await vi.advanceTimersByTimeAsync(1_000);
    // Every place was taken: the right secret's give-back took the oldest refusal's, and landed.
    expect(givenBack.has(createHash('sha256').update('user:192.0.2.1 demo').digest('base64url'))).toBe(true);
    // The user's count was given back: five more tries, none refused.
    for (let i = 0; i < 5; i++) expect((await countFailures({ user: 5 }, windows).attempt([{ kind: 'user', id: '192.0.2.1 demo' }])).retryAfter).toBe(0);
  });
});
