/**
 * The store guard (docs/stores.md#deadlines-and-outages): a deadline on each call that measures
 * the store, not the local queue; a late call waited for while the store answers others; a
 * StoreUnavailableError for a failure; one warning per outage and one notice when it ends,
 * however many calls fail between; a store that flaps logs at most one warning and one notice a
 * minute, and the next warning counts the outages it did not log.
 */
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/core/errors.js';
import { StoreBusyError, StoreDataError, StoreFailedError, StoreTimeoutError } from '../../src/core/store-errors.js';
import { createStoreGuard, LATE_LIMIT, RELAPSE_WINDOW_MS, roundTripAnswered } from '../../src/core/store-guard.js';
import { createStoreLane, MAX_WAITING } from '../../src/core/store-lane.js';
import { capturingLogger } from '../support/logger.js';

const down = () => Promise.reject(new Error('connection reset'));
const up = () => Promise.resolve('ok');

const after = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Answers `value` after `ms`. */
const slow = <T>(ms: number, value: T) => () => after(ms).then(() => value);

function setup(timeoutMs = 50, lane?: ReturnType<typeof createStoreLane>) {
  const logger = capturingLogger();
  let errors = 0;
  /** The guard's clock, moved by the test (the deadlines run on real time). */
  let clock = Date.parse('2026-03-01T12:00:00Z');
  const guard = createStoreGuard({ name: 'OAuth store (redis)', timeoutMs, logger, onError: () => errors++, ...(lane ? { lane } : {}), now: () => clock });
  const lines = () => logger.records.map((r) => `${r.level}: ${r.message}`);
  /** The fields of each line, as a host storing pino's output would read them. */
  const fields = () => logger.records.map((r) => JSON.parse(r.line) as Record<string, unknown>);
  const advance = (ms: number) => (clock += ms);
  return { guard, lines, fields, logger, advance, errors: () => errors };
}

describe('store guard', () => {
  it('a failed call rejects with a 503 store_unavailable carrying Retry-After, and no detail for the client', async () => {
    const { guard } = setup();
    const error = await guard.run(down).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ status: 503, code: 'store_unavailable', headers: { 'retry-after': '1' } });
    expect((error as Error).message).not.toContain('reset');
  });

  it('a call to a silent store fails at twice its deadline with store_timeout, and later calls at the deadline', async () => {
    const { guard } = setup(100);
    const hang = () => new Promise<never>(() => {});
    let started = performance.now();
    const first = await guard.ask(hang).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(StoreTimeoutError);
    expect(first).toMatchObject({ code: 'store_timeout', store: 'OAuth store (redis)' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    expect(performance.now() - started).toBeLessThan(1000);
    started = performance.now();
    await expect(guard.run(hang)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(performance.now() - started).toBeLessThan(190);
    expect(guard.degraded).toBe(true);
  });

  it('a late call is waited for while the store answers other calls: slow is not down', async () => {
    const { guard, lines, errors } = setup(50);
    // One call takes four deadlines; others keep being answered meanwhile.
    const late = guard.ask(slow(200, 'late answer'));
    for (let i = 0; i < 9; i++) expect(await guard.ask(slow(20, i))).toBe(i);
    expect(await late).toBe('late answer');
    expect(lines()).toEqual([]);
    expect(errors()).toBe(0);
    expect(guard.degraded).toBe(false);
  });

  it(`a late call gives up after ${LATE_LIMIT} deadlines even while other calls are answered`, async () => {
    const { guard } = setup(20);
    const stuck = guard.ask(() => new Promise<never>(() => {})).catch((e: unknown) => e);
    const started = performance.now();
    let answered = 0;
    while (performance.now() - started < LATE_LIMIT * 20 + 100) {
      await guard.ask(slow(5, 'ok')).catch(() => undefined);
      answered++;
    }
    expect(await stuck).toBeInstanceOf(StoreTimeoutError);
    expect(answered).toBeGreaterThan(5);
  });

  it(`a call of many round trips, each answered in time, runs past ${LATE_LIMIT} deadlines on an idle store: a long listing is not an outage`, async () => {
    const { guard, lines, errors } = setup(20);
    const started = performance.now();
    // A SCAN through a big keyspace: 30 round trips of 10 ms, nothing else asked meanwhile.
    const listing = guard.ask(async (call) => {
      for (let trip = 0; trip < 30; trip++) {
        await after(10);
        call.answered!();
      }
      return 'every key';
    });
    expect(await listing).toBe('every key');
    expect(performance.now() - started).toBeGreaterThan(LATE_LIMIT * 20);
    expect([lines(), errors(), guard.degraded]).toEqual([[], 0, false]);
  });

  it('a round trip of a long call that goes unanswered still fails the call at twice the deadline', async () => {
    const { guard } = setup(50);
    const started = performance.now();
    const stalled = guard.ask(async (call) => {
      await after(20);
      call.answered!();
      return new Promise<never>(() => {});
    });
    expect(await stalled.catch((e: unknown) => e)).toBeInstanceOf(StoreTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(20 + 95);
    expect(guard.degraded).toBe(true);
  });

  it('a call of many round trips stops at the next one once the guard has answered its caller: nobody waits for the rest', async () => {
    const { guard } = setup(20);
    let trips = 0;
    const walk = guard.ask(async (call) => {
      for (;;) {
        // The third round trip stalls past the deadline, then is answered.
        await after(trips === 2 ? 120 : 5);
        trips++;
        roundTripAnswered(call);
      }
    });
    expect(await walk.catch((e: unknown) => e)).toBeInstanceOf(StoreTimeoutError);
    await after(100);
    expect(trips).toBe(3);
  });

  it('an outage fails the late calls at once', async () => {
    const { guard } = setup(200);
    const started = performance.now();
    const late = guard.ask(() => new Promise<never>(() => {})).catch((e: unknown) => e);
    // Another call is answered after the deadline: the first one is late, not failed.
    await guard.ask(slow(250, 'answered'));
    await after(50);
    await guard.ask(down).catch(() => undefined);
    expect(await late).toBeInstanceOf(StoreTimeoutError);
    expect(performance.now() - started).toBeLessThan(390);
  });

  it('logs one warning for many failures and one notice at the first success after them', async () => {
    const { guard, lines, logger, advance } = setup();
    expect(await guard.run(up)).toBe('ok');
    await Promise.all(Array.from({ length: 50 }, () => guard.run(down).catch(() => undefined)));
    expect(await guard.run(up)).toBe('ok');
    expect(await guard.run(up)).toBe('ok');
    advance(RELAPSE_WINDOW_MS);
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

  it('a store that flaps (reads answered, writes refused) logs one warning and one notice a minute, however many outages it has', async () => {
    const { guard, lines, fields, advance, errors } = setup();
    const ran: number[] = [];
    // 100 calls in 10 s, a refused write and an answered read in turn.
    for (let i = 0; i < 50; i++) {
      await guard.run(down).catch(() => undefined);
      expect(guard.degraded).toBe(true);
      guard.whenBack(() => ran.push(i));
      advance(100);
      expect(await guard.run(up)).toBe('ok');
      expect(guard.degraded).toBe(false);
      advance(100);
    }
    expect(lines()).toEqual(['warn: OAuth store (redis) unavailable: answering 503 until it is back', 'info: OAuth store (redis) available again']);
    // Only the log is damped: every outage was one for the calls, the actions and the metrics.
    expect(ran).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(errors()).toBe(50);

    // A failure a window after the warning warns again and counts the 49 outages not logged.
    advance(RELAPSE_WINDOW_MS - 10_000);
    await guard.run(down).catch(() => undefined);
    advance(100);
    await guard.run(up);
    expect(lines().slice(2)).toEqual([
      'warn: OAuth store (redis) unavailable: answering 503 until it is back (flapping: 49 outages since the last warning went unlogged)',
      'info: OAuth store (redis) available again',
    ]);
    expect(fields()[2]).toMatchObject({ relapses: 49, store: 'OAuth store (redis)', err: { message: expect.stringContaining('connection reset') } });
    expect(fields()[3]).toMatchObject({ unavailableForMs: 100 });
    expect(fields()[3]).not.toHaveProperty('relapses');
  });

  it('a relapse that lasts past the window logs its warning at the next failure, so the log does not end on "available again"', async () => {
    const { guard, lines, fields, advance } = setup();
    await guard.run(down).catch(() => undefined);
    advance(1000);
    await guard.run(up);
    advance(1000);
    await guard.run(down).catch(() => undefined); // a relapse, over a second later
    advance(1000);
    await guard.run(up);
    advance(1000);
    await guard.run(down).catch(() => undefined); // a relapse that stays
    advance(RELAPSE_WINDOW_MS - 4000 - 1);
    await guard.run(down).catch(() => undefined);
    expect(lines()).toHaveLength(2);
    advance(1);
    await guard.run(down).catch(() => undefined);
    advance(5000);
    await guard.run(down).catch(() => undefined);
    advance(1000);
    await guard.run(up);
    expect(lines()).toEqual([
      'warn: OAuth store (redis) unavailable: answering 503 until it is back',
      'info: OAuth store (redis) available again',
      'warn: OAuth store (redis) unavailable: answering 503 until it is back (flapping: 1 outage since the last warning went unlogged)',
      'info: OAuth store (redis) available again',
    ]);
    // Down since the relapse began, 4 s after the first warning.
    expect(fields()[2]).toMatchObject({ relapses: 1, unavailableForMs: RELAPSE_WINDOW_MS - 4000 });
    expect(fields()[3]).toMatchObject({ unavailableForMs: RELAPSE_WINDOW_MS - 4000 + 6000 });
  });

  it('a store down for a long time logs one warning and, back for good, one notice', async () => {
    const { guard, lines, fields, advance, errors } = setup();
    for (let i = 0; i < 60; i++) {
      await guard.run(down).catch(() => undefined);
      advance(10_000);
    }
    expect(lines()).toEqual(['warn: OAuth store (redis) unavailable: answering 503 until it is back']);
    await guard.run(up);
    for (let i = 0; i < 10; i++) {
      advance(10_000);
      await guard.run(up);
    }
    expect(lines()).toEqual(['warn: OAuth store (redis) unavailable: answering 503 until it is back', 'info: OAuth store (redis) available again']);
    expect(fields()[0]).not.toHaveProperty('relapses');
    expect(fields()[0]).not.toHaveProperty('unavailableForMs');
    expect(fields()[1]).toMatchObject({ unavailableForMs: 600_000 });
    expect(errors()).toBe(60);
  });

  it('a clock set back does not silence the next outage', async () => {
    const { guard, lines, advance } = setup();
    await guard.run(down).catch(() => undefined);
    await guard.run(up);
    advance(-3_600_000);
    await guard.run(down).catch(() => undefined);
    expect(lines().filter((line) => line.startsWith('warn:'))).toHaveLength(2);
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

  it('time waiting for a connection of the lane does not count against the deadline', async () => {
    const lane = createStoreLane(1, 5_000);
    const { guard, lines } = setup(60, lane);
    // Four calls of 40 ms each through one connection: the last waits 120 ms, twice its deadline.
    const answers = await Promise.all([1, 2, 3, 4].map((i) => guard.ask(slow(40, i))));
    expect(answers).toEqual([1, 2, 3, 4]);
    expect(lines()).toEqual([]);
  });

  it('past the bound of the lane a call is shed with store_busy: no outage, no warning, not counted as a store failure', async () => {
    const lane = createStoreLane(1, 50);
    const { guard, lines, errors } = setup(1000, lane);
    const holder = guard.ask(slow(200, 'first'));
    const shed = await guard.run(slow(1, 'second')).catch((e: unknown) => e);
    expect(shed).toBeInstanceOf(StoreUnavailableError);
    expect((shed as Error).cause).toBeInstanceOf(StoreBusyError);
    expect(await holder).toBe('first');
    expect(lines()).toEqual([]);
    expect(errors()).toBe(0);
    expect(guard.degraded).toBe(false);
  });

  it('the calls waiting for a connection when the store is found failing are shed at once, not each given a connection to meet the deadline in turn', async () => {
    const lane = createStoreLane(1, 5_000);
    const { guard } = setup(50, lane);
    const hang = () => new Promise<never>(() => {});
    const started = performance.now();
    const holder = guard.ask(hang).catch((e: unknown) => e);
    const queued = [1, 2, 3, 4, 5].map(() => guard.ask(hang).catch((e: unknown) => [e, performance.now() - started] as const));
    expect(await holder).toBeInstanceOf(StoreTimeoutError);
    for (const [error, ms] of await Promise.all(queued)) {
      expect(error).toBeInstanceOf(StoreBusyError);
      // Shed with the first call's failure (twice its 50 ms deadline), not one deadline after another.
      expect(ms).toBeLessThan(250);
    }
    expect(guard.degraded).toBe(true);
  });

  it('the bound counts the whole local wait: a call that already waited elsewhere in the process (a batch behind the one in flight) is shed when its total reaches it', async () => {
    const lane = createStoreLane(1, 200);
    const holder = await lane.enter('s');
    // Waited 150 ms before it came: 50 ms are left of the 200.
    const started = performance.now();
    const late = await lane.enter('s', true, started - 150).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(late).toMatchObject({ code: 'store_busy' });
    expect(waited).toBeGreaterThanOrEqual(40);
    // Well short of the whole 200 ms bound, which would mean the earlier wait was not counted.
    expect(waited).toBeLessThan(190);
    // Waited the whole bound already: shed at once, before it queues.
    await expect(lane.enter('s', true, performance.now() - 250)).rejects.toMatchObject({ code: 'store_busy' });
    // With a connection free, no call is shed, however long it waited before.
    holder();
    (await lane.enter('s', true, performance.now() - 250))();
  });

  it(`the lane sheds the call that would wait behind ${MAX_WAITING} others`, async () => {
    const lane = createStoreLane(1, 10_000);
    const holder = await lane.enter('s');
    const waiting = Array.from({ length: MAX_WAITING }, () => lane.enter('s').then((release) => release()));
    await expect(lane.enter('s')).rejects.toMatchObject({ code: 'store_busy' });
    holder();
    await Promise.all(waiting);
  });

  it('while the store is failing a call does not wait for a connection', async () => {
    const lane = createStoreLane(1, 10_000);
    const { guard } = setup(1000, lane);
    const holder = guard.ask(() => new Promise<never>(() => {})).catch(() => undefined);
    await guard.failedNow(new Error('connection reset'));
    const started = performance.now();
    await expect(guard.ask(up)).rejects.toBeInstanceOf(StoreBusyError);
    expect(performance.now() - started).toBeLessThan(100);
    void holder;
  });

  it('a failure keeps its code: store_failed with the cause', async () => {
    const { guard } = setup();
    const error = await guard.ask(down).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreFailedError);
    expect(error).toMatchObject({ code: 'store_failed', cause: { message: 'connection reset' } });
  });
});

describe('store guard: a data error about one record', () => {
  /** What ioredis rejects with for a counter key that holds a hash (in a script). */
  const wrongType = () => Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value script: 0a1b, on @user_script:6.'), { name: 'ReplyError' });
  /** What pg rejects with for a count that no longer fits a bigint. */
  const outOfRange = () => Object.assign(new Error('bigint out of range'), { code: '22003', severity: 'ERROR' });

  it.each([
    ['Redis WRONGTYPE', wrongType],
    ['PostgreSQL 22003', outOfRange],
  ])('%s is a StoreDataError: no outage, no warning, not counted as a store failure', async (_name, damaged) => {
    const { guard, lines, errors } = setup();
    for (let i = 0; i < 3; i++) {
      const error = await guard.ask(() => Promise.reject(damaged())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreDataError);
      expect(error).toMatchObject({ code: 'store_failed', cause: { message: damaged().message } });
    }
    expect(guard.failedNow(damaged())).toBeInstanceOf(StoreDataError);
    expect(guard.degraded).toBe(false);
    expect(errors()).toBe(0);
    expect(lines()).toEqual([]);
  });

  it('sheds none of the calls waiting for a connection', async () => {
    const lane = createStoreLane(1, 10_000);
    const { guard } = setup(1000, lane);
    const first = guard.ask(() => after(20).then(() => Promise.reject(outOfRange()))).catch((e: unknown) => e);
    const waiting = guard.ask(up);
    expect(await first).toBeInstanceOf(StoreDataError);
    expect(await waiting).toBe('ok');
  });

  it('is an answer: it ends an outage', async () => {
    const { guard, lines } = setup();
    await guard.ask(down).catch(() => undefined);
    expect(guard.degraded).toBe(true);
    await guard.ask(() => Promise.reject(wrongType())).catch(() => undefined);
    expect(guard.degraded).toBe(false);
    expect(lines()).toEqual([expect.stringMatching(/^warn: OAuth store \(redis\) unavailable/), 'info: OAuth store (redis) available again']);
  });
});
