/**
 * The store guard (docs/deployment.md): a deadline on each call, a StoreUnavailableError for a
 * failure, one warning per outage and one notice when it ends, however many calls fail between.
 */
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/core/errors.js';
import { createStoreGuard, guardMethods } from '../../src/core/store-guard.js';
import { capturingLogger } from '../support/logger.js';

const down = () => Promise.reject(new Error('connection reset'));
const up = () => Promise.resolve('ok');

function setup(timeoutMs = 50) {
  const logger = capturingLogger();
  const guard = createStoreGuard({ name: 'OAuth store (redis)', timeoutMs, logger });
  const lines = () => logger.records.map((r) => `${r.level}: ${r.message}`);
  return { guard, lines, logger };
}

describe('store guard', () => {
  it('a failed call rejects with a 503 store_unavailable carrying Retry-After, and no detail for the client', async () => {
    const { guard } = setup();
    const error = await guard.run(down).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ status: 503, code: 'store_unavailable', headers: { 'retry-after': '1' } });
    expect((error as Error).message).not.toContain('reset');
  });

  it('a call that misses its deadline rejects at the deadline instead of waiting', async () => {
    const { guard } = setup(50);
    const started = performance.now();
    await expect(guard.run(() => new Promise<never>(() => {}))).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('logs one warning for many failures and one notice at the first success after them', async () => {
    const { guard, lines, logger } = setup();
    expect(await guard.run(up)).toBe('ok');
    await Promise.all(Array.from({ length: 50 }, () => guard.run(down).catch(() => undefined)));
    expect(await guard.run(up)).toBe('ok');
    expect(await guard.run(up)).toBe('ok');
    await guard.run(down).catch(() => undefined);
    expect(lines()).toEqual([
      'warn: OAuth store (redis) unavailable: answering 503 until it is back',
      'info: OAuth store (redis) available again',
      'warn: OAuth store (redis) unavailable: answering 503 until it is back',
    ]);
    expect(logger.text()).toContain('connection reset');
  });

  it('a call issued before the outage was seen does not end it, nor does one issued before the recovery start another', async () => {
    const { guard, lines } = setup(1000);
    let finishEarly!: (value: string) => void;
    const early = guard.run(() => new Promise<string>((resolve) => (finishEarly = resolve)));
    await guard.run(down).catch(() => undefined);
    finishEarly('late');
    await early;
    expect(lines()).toHaveLength(1);

    let failStraggler!: (error: Error) => void;
    const straggler = guard.run(() => new Promise<string>((_, reject) => (failStraggler = reject))).catch(() => undefined);
    await guard.run(up);
    failStraggler(new Error('late failure'));
    await straggler;
    expect(lines()).toEqual(['warn: OAuth store (redis) unavailable: answering 503 until it is back', 'info: OAuth store (redis) available again']);
  });

  it('whenBack runs an action when the outage ends, at once without one', async () => {
    const { guard } = setup();
    const ran: string[] = [];
    guard.whenBack(() => ran.push('now'));
    await guard.run(down).catch(() => undefined);
    guard.whenBack(() => ran.push('later'));
    expect(ran).toEqual(['now']);
    await guard.run(up);
    expect(ran).toEqual(['now', 'later']);
  });

  it('guardMethods guards promise-returning methods and leaves synchronous answers and fields alone', async () => {
    const { guard } = setup();
    const target = { kind: 'redis', sync: () => 42, failing: () => Promise.reject(new Error('boom')) };
    const guarded = guardMethods(target, guard);
    expect(guarded.kind).toBe('redis');
    expect(guarded.sync()).toBe(42);
    await expect(guarded.failing()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
