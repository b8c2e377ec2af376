/**
 * createFailureThrottle, the counting behind every brute-force limit (docs/oauth.md#brute-force-limits):
 * keys of several kinds with limits of their own, and reservations that land, race, lose their
 * answers and are given back, on the memory, Redis and PostgreSQL stores.
 *
 * Whole though past 350 lines: the reservation suite is one set of cases run on every store.
 */
import { describe, expect, it, vi } from 'vitest';
import { countFailures, createFailureThrottle, guardedThrottle, type CountedKey, type FailureThrottle, type Reserved } from '../../src/oauth/throttle.js';
import { failureWindows, type FailureWindows } from '../../src/oauth/failure-windows.js';
import { failureWindowStatements } from '../../src/oauth/store/postgres-sql.js';
import { createStoreGuard } from '../../src/core/store-guard.js';
import { StoreTimeoutError } from '../../src/core/store-errors.js';
import { silentLogger } from '../../src/core/logger.js';
import pg from 'pg';
import { databaseUrl, describePostgres, describeRedis } from '../support/services.js';
import { memoryStores, postgresStores, redisStores, storesForEachTest, type StoreFactory } from './shared-stores.js';

/** Keys of two kinds with limits of their own, as client authentication counts an IP and an IP with a client id. */
function keyKindsSuite(makeStores: () => StoreFactory) {
  const stores = storesForEachTest(makeStores);
  const throttle = () => createFailureThrottle({ failures: { ip: 5, pair: 2 }, windowSeconds: 60, name: 'kinds', store: stores().open() });
  const keys = (ip: string, client: string) => [
    { kind: 'ip', id: ip },
    { kind: 'pair', id: `${ip} ${client}` },
  ];

  it('each kind of key holds at its own limit: 2 per IP and client, 5 per IP; a refusal counts nothing', async () => {
    const counts = throttle();
    const refused: boolean[] = [];
    for (const client of ['a', 'a', 'a', 'b', 'b', 'c', 'c']) refused.push((await counts.attempt(keys('192.0.2.1', client))).retryAfter > 0);
    // a: its pair is full at 2. b: 2 more on the IP (4). c: the IP's fifth, then the IP is full.
    expect(refused).toEqual([false, false, true, false, false, false, true]);
    expect((await counts.attempt(keys('192.0.2.2', 'a'))).retryAfter).toBe(0);
  });

  it('50 concurrent attempts on one IP and client: exactly 2 check, and the losers give back what they reserved on the IP', async () => {
    const counts = throttle();
    const attempts = await Promise.all(Array.from({ length: 50 }, () => counts.attempt(keys('192.0.2.3', 'a'))));
    expect(attempts.filter((attempt) => attempt.retryAfter === 0)).toHaveLength(2);
    const others: number[] = [];
    for (const client of ['b', 'c', 'd', 'e']) others.push((await counts.attempt(keys('192.0.2.3', client))).retryAfter);
    expect(others.map((wait) => wait > 0)).toEqual([false, false, false, true]);
  });

  it("a give-back that runs twice at once (a retry while the first is still under way) gives back once, never another attempt's failure", async () => {
    const counts = throttle();
    const other = await counts.attempt(keys('192.0.2.4', 'a')); // a failure that stays counted
    expect(other.retryAfter).toBe(0);
    const mine = await counts.attempt(keys('192.0.2.4', 'a'));
    await Promise.all([mine.release(), mine.release()]);
    // The pair holds the other attempt's failure: one more fills it (limit 2), a second is refused.
    expect((await counts.attempt(keys('192.0.2.4', 'a'))).retryAfter).toBe(0);
    expect((await counts.attempt(keys('192.0.2.4', 'a'))).retryAfter).toBeGreaterThan(0);
  });
}

/**
 * Windows whose reservations land and then lose their answer while `lost` is true, as when the
 * connection breaks after the command left: the store counted, the caller never heard.
 */
function losingAnswers(windows: FailureWindows) {
  const state = { lost: false };
  const lossy: FailureWindows = {
    windowMs: windows.windowMs,
    peek: (key) => windows.peek(key),
    async reserve(key, attemptId) {
      const answer = await windows.reserve(key, attemptId);
      if (state.lost) throw new Error('connection lost');
      return answer;
    },
    giveBack: (key, attemptId) => windows.giveBack(key, attemptId),
  };
  return { state, lossy };
}

/** Each attempt is counted by its id, so a step sent twice, or for an attempt that never landed, counts once or not at all. */
/** A right secret passes and gives its own back; with one wrong secret held by the pair (limit 3), two more pass and the third is refused. */
async function expectOneWrongSecretHeld(throttle: FailureThrottle, keys: readonly CountedKey[]) {
  const right = await throttle.attempt(keys);
  expect(right.retryAfter).toBe(0);
  await right.release();
  for (let i = 0; i < 2; i++) expect((await throttle.attempt(keys)).retryAfter).toBe(0);
  expect((await throttle.attempt(keys)).retryAfter).toBeGreaterThan(0);
}

function reservationSuite(makeStores: () => StoreFactory) {
  const stores = storesForEachTest(makeStores);
  const windows = () => failureWindows(stores().open(), 'ids', 60_000);
  const limits = { ip: 10, pair: 3 };
  const keys = [
    { kind: 'ip', id: '192.0.2.1' },
    { kind: 'pair', id: '192.0.2.1 app' },
  ];

  it('a reservation sent twice for one attempt (a retry, a resend after a reconnect) counts once', async () => {
    const counts = windows();
    expect((await counts.reserve('k', 'attempt-1')).count).toBe(1);
    const again = await counts.reserve('k', 'attempt-1');
    expect(again.count).toBe(1);
    expect(again.msLeft).toBeGreaterThan(0);
    expect(again.msLeft).toBeLessThanOrEqual(60_000);
    expect((await counts.reserve('k', 'attempt-2')).count).toBe(2);
  });

  it('a give-back for an attempt that never landed on the key changes no count', async () => {
    const counts = windows();
    await counts.reserve('k', 'attempt-1');
    await counts.reserve('k', 'attempt-2');
    await counts.giveBack('k', 'attempt-3');
    await counts.giveBack('other', 'attempt-1');
    expect((await counts.peek('k'))?.count).toBe(2);
    expect(await counts.peek('other')).toBeNull();
  });

  it("a give-back applied twice gives back once: the other attempts' failures stay counted", async () => {
    const counts = windows();
    for (const id of ['attempt-1', 'attempt-2', 'attempt-3']) await counts.reserve('k', id);
    await counts.giveBack('k', 'attempt-2');
    await counts.giveBack('k', 'attempt-2');
    expect((await counts.peek('k'))?.count).toBe(2);
    await counts.giveBack('k', 'attempt-1');
    await counts.giveBack('k', 'attempt-3');
    expect(await counts.peek('k')).toBeNull();
  });

  it('attempts whose reservation answers were lost are given back in full once the store answers: the right secret still passes after more of them than the limit, and real failures stay counted', async () => {
    const { state, lossy } = losingAnswers(windows());
    const throttle = countFailures(limits, lossy);
    expect((await throttle.attempt(keys)).retryAfter).toBe(0); // a wrong secret: stays counted
    state.lost = true;
    for (let i = 0; i < 15; i++) {
      let reserved: Reserved | undefined;
      const error = await throttle.attempt(keys, { reserving: (what) => (reserved = what) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      await reserved!.release();
    }
    state.lost = false;
    // The pair (limit 3) holds the one wrong secret: two more pass, the third is refused.
    await expectOneWrongSecretHeld(throttle, keys);
  });

  it('a reservation that reaches the store after its own give-back counts nothing, while other attempts still count, until a window after the give-back', async () => {
    const counts = failureWindows(stores().open(), 'late', 600);
    await counts.reserve('k', 'attempt-1');
    await counts.giveBack('k', 'late');
    const late = await counts.reserve('k', 'late');
    expect(late.count).toBe(1);
    expect(late.msLeft).toBeGreaterThan(0);
    expect((await counts.reserve('k', 'attempt-2')).count).toBe(2);
    expect((await counts.reserve('k', 'late')).count).toBe(2);
    // On a key with no window, too: the late reservation starts none.
    await counts.giveBack('empty', 'late');
    expect((await counts.reserve('empty', 'late')).count).toBe(0);
    expect(await counts.peek('empty')).toBeNull();
    expect((await counts.reserve('empty', 'attempt-3')).count).toBe(1);
    // A window after the give-back, the id is forgotten: it counts like any other.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await counts.reserve('k', 'late')).count).toBe(1);
    expect((await counts.reserve('empty', 'late')).count).toBe(1);
  });

  it('a count that reaches the store again after its attempt was counted and given back (a resend landed, the bytes first sent arrive late) counts nothing', async () => {
    const counts = windows();
    await counts.reserve('k', 'attempt-1');
    expect((await counts.reserve('k', 'resent')).count).toBe(2);
    await counts.giveBack('k', 'resent');
    const late = await counts.reserve('k', 'resent');
    expect(late.count).toBe(1);
    expect(late.msLeft).toBeGreaterThan(0);
    expect((await counts.peek('k'))?.count).toBe(1);
    // Where it was the window's only count: the late copy starts no window.
    expect((await counts.reserve('alone', 'resent')).count).toBe(1);
    await counts.giveBack('alone', 'resent');
    expect((await counts.reserve('alone', 'resent')).count).toBe(0);
    expect(await counts.peek('alone')).toBeNull();
  });

  /**
   * Windows of 60 s on a clock the test moves: the store's on Redis and PostgreSQL, and
   * `performance.now`, faked, for the windows in memory. A window counted on Redis still ends by
   * the server's clock, long after the test.
   */
  function steppedWindows(name: string) {
    let clock = Date.now();
    if (!stores().shared) vi.useFakeTimers({ toFake: ['performance'] });
    const counts = failureWindows(stores().open(() => clock), name, 60_000);
    const step = (ms: number) => {
      clock += ms;
      if (!stores().shared) vi.advanceTimersByTime(ms);
    };
    return { counts, step, now: () => clock };
  }

  it('an id given back before it was counted is forgotten a window after its own give-back, whatever is given back on the key after it', async () => {
    try {
      const { counts, step } = steppedWindows('forget');
      await counts.giveBack('k', 'late-a');
      step(35_000);
      await counts.giveBack('k', 'late-b');
      step(30_000);
      // 65 s after its give-back, late-a's count counts; 30 s after its own, late-b's still counts nothing.
      expect((await counts.reserve('k', 'late-a')).count).toBe(1);
      expect((await counts.reserve('k', 'late-b')).count).toBe(1);
      expect((await counts.reserve('k', 'attempt-1')).count).toBe(2);
      step(30_000);
      expect((await counts.reserve('k', 'late-b')).count).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('give-backs that go on without end on one key (a failing store, one busy address) leave one window of them remembered, no more', async () => {
    try {
      const { counts, step, now } = steppedWindows('busy');
      // One give-back every 25 s for ten minutes.
      for (let i = 0; i < 24; i++) {
        if (i > 0) step(25_000);
        await counts.giveBack('k', `late-${i}`);
      }
      // What the store keeps (out of the test's reach in memory): the give-backs of the last window, as after each of them.
      const { givenBack } = stores();
      if (givenBack) expect(await givenBack('busy', 'k', now())).toEqual(['late-21', 'late-22', 'late-23']);
      step(25_000);
      expect((await counts.reserve('k', 'late-0')).count).toBe(1);
      expect((await counts.reserve('k', 'late-21')).count).toBe(2);
      expect((await counts.reserve('k', 'late-22')).count).toBe(2);
      expect((await counts.reserve('k', 'late-23')).count).toBe(2);
      if (givenBack) expect(await givenBack('busy', 'k', now())).toEqual(['late-22', 'late-23']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('attempts whose reservations reach the store only after their give-backs (held on a connection whose answer was lost) never lock out the right secret', async () => {
    const base = windows();
    const held: (() => Promise<unknown>)[] = [];
    let holding = false;
    const late: FailureWindows = {
      windowMs: base.windowMs,
      peek: (key) => base.peek(key),
      async reserve(key, attemptId) {
        if (!holding) return base.reserve(key, attemptId);
        held.push(() => base.reserve(key, attemptId));
        throw new Error('deadline passed');
      },
      giveBack: (key, attemptId) => base.giveBack(key, attemptId),
    };
    const throttle = countFailures(limits, late);
    expect((await throttle.attempt(keys)).retryAfter).toBe(0); // a wrong secret: stays counted
    holding = true;
    for (let i = 0; i < 15; i++) {
      let reserved: Reserved | undefined;
      const error = await throttle.attempt(keys, { reserving: (what) => (reserved = what) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      await reserved!.release();
      await held.shift()!();
    }
    holding = false;
    // The pair (limit 3) holds the one wrong secret only: two more pass, the third is refused.
    await expectOneWrongSecretHeld(throttle, keys);
  });

  it('attempts answered as failed while the store stalled, whose counts land as it comes back, never refuse the next right secret: their give-backs are made before it is judged', async () => {
    const base = windows();
    let resume = () => {};
    let stalled: Promise<void> | undefined;
    // The three held attempts have all read the windows before the first of their counts lands.
    let sent = 0;
    let allSent = () => {};
    const three = new Promise<void>((resolve) => (allSent = resolve));
    // The store stalls once the reservations were sent: they land, their answers come only when
    // it is back, and nothing else reaches it meanwhile (a pool's connections are all held).
    const stalling: FailureWindows = {
      windowMs: base.windowMs,
      peek: (key) => base.peek(key),
      async reserve(key, attemptId) {
        if (!stalled) return base.reserve(key, attemptId);
        if (++sent === 3) allSent();
        await three;
        const answer = await base.reserve(key, attemptId);
        await stalled;
        return answer;
      },
      async giveBack(key, attemptId) {
        if (stalled) throw new Error('timeout exceeded when trying to connect');
        await base.giveBack(key, attemptId);
      },
    };
    const guard = createStoreGuard({ name: 'stalling store', timeoutMs: 100, logger: silentLogger });
    // Three failures per IP: the attempts held by the stall would fill it.
    const throttle = guardedThrottle(countFailures({ ip: 3, pair: 10 }, stalling), guard, 'as-is');
    expect((await throttle.attempt(keys)).retryAfter).toBe(0); // a wrong secret: stays counted
    stalled = new Promise((resolve) => (resume = resolve));
    // Nobody is answered for these: each fails at its deadline, an outage.
    const held = await Promise.all(Array.from({ length: 3 }, () => throttle.attempt(keys).catch((error: unknown) => error)));
    for (const error of held) expect(error).toBeInstanceOf(StoreTimeoutError);
    expect(guard.degraded).toBe(true);
    stalled = undefined;
    resume();
    // The store is back, its counts of the held attempts landed: the right secret is the first
    // call, and passes. The wrong secret answered before the stall is still the only failure.
    await expectOneWrongSecretHeld(throttle, keys);
  });

  it('a window is fixed from its first reservation: a later one does not stretch it, and once it ends the next reservation starts a new one', async () => {
    const counts = failureWindows(stores().open(), 'fixed', 600);
    const started = performance.now();
    await counts.reserve('k', 'attempt-1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = await counts.reserve('k', 'attempt-2');
    expect(later.count).toBe(2);
    expect(later.msLeft).toBeLessThanOrEqual(600 - (performance.now() - started) + 50);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 700 - (performance.now() - started))));
    expect(await counts.peek('k')).toBeNull();
    const next = await counts.reserve('k', 'attempt-3');
    expect(next.count).toBe(1);
    expect(next.msLeft).toBeGreaterThan(400);
  });

  it('a refusal whose give-back the store failed right then gives it back once the store answers: a refusal counts nothing', async () => {
    const base = windows();
    let failGiveBack = false;
    // Peeking sees nothing, so the second attempt goes over its limit while reserving, as a concurrent one does.
    const racing: FailureWindows = {
      windowMs: base.windowMs,
      peek: async () => null,
      reserve: (key, attemptId) => base.reserve(key, attemptId),
      async giveBack(key, attemptId) {
        if (failGiveBack) {
          failGiveBack = false;
          throw new Error('connection reset');
        }
        await base.giveBack(key, attemptId);
      },
    };
    const guard = createStoreGuard({ name: 'flaky store', timeoutMs: 1000, logger: silentLogger });
    const throttle = guardedThrottle(countFailures({ ip: 3, pair: 1 }, racing), guard, 'as-is');
    expect((await throttle.attempt(keys)).retryAfter).toBe(0); // a wrong secret: the address holds 1
    failGiveBack = true;
    expect((await throttle.attempt(keys)).retryAfter).toBeGreaterThan(0);
    // The address holds its one real failure again: two more clients from it may try, the third is refused.
    const plain = countFailures({ ip: 3, pair: 1 }, base);
    const client = (id: string) => [keys[0]!, { kind: 'pair', id: `192.0.2.1 ${id}` }];
    await vi.waitFor(async () => expect(failGiveBack).toBe(false));
    await vi.waitFor(async () => expect((await plain.attempt(client('b'))).retryAfter).toBe(0), { timeout: 2000, interval: 50 });
    expect((await plain.attempt(client('c'))).retryAfter).toBe(0);
    expect((await plain.attempt(client('d'))).retryAfter).toBeGreaterThan(0);
  });

  it("through the store guard: attempts that lost their answers are given back without the caller's help, so nobody is locked out", async () => {
    const { state, lossy } = losingAnswers(windows());
    const guard = createStoreGuard({ name: 'lossy store', timeoutMs: 1000, logger: silentLogger });
    const throttle = guardedThrottle(countFailures(limits, lossy), guard, 'as-is');
    state.lost = true;
    for (let i = 0; i < 15; i++) await expect(throttle.attempt(keys)).rejects.toThrow();
    state.lost = false;
    // A right secret, once the give-backs landed: it gives its own back.
    await vi.waitFor(
      async () => {
        const right = await throttle.attempt(keys);
        await right.release();
        expect(right.retryAfter).toBe(0);
      },
      { timeout: 5000, interval: 50 },
    );
    for (let i = 0; i < 3; i++) expect((await throttle.attempt(keys)).retryAfter).toBe(0);
    expect((await throttle.attempt(keys)).retryAfter).toBeGreaterThan(0);
  });
}

describe('createFailureThrottle: a limit per kind of key, in memory', () => {
  keyKindsSuite(memoryStores);
  reservationSuite(memoryStores);

  it('a key of a kind without a limit is an invalid_argument naming the kind', async () => {
    const counts = createFailureThrottle({ failures: { ip: 1 }, windowSeconds: 60, name: 'kinds' });
    await expect(counts.attempt([{ kind: 'user', id: 'demo' }])).rejects.toThrow(expect.objectContaining({ code: 'invalid_argument', message: expect.stringMatching(/kind user/) }));
  });
});

describeRedis('createFailureThrottle on the Redis OAuth store', () => {
  keyKindsSuite(redisStores);
  reservationSuite(redisStores);
});

describePostgres('createFailureThrottle on the PostgreSQL OAuth store', () => {
  keyKindsSuite(postgresStores);
  reservationSuite(postgresStores);

  it('a count that waits for its window while the give-back of its id commits counts nothing', async () => {
    const clock = Date.now();
    const stores = postgresStores({ now: () => clock });
    const giver = new pg.Client({ connectionString: databaseUrl });
    try {
      const counts = failureWindows(stores.open(), 'race', 60_000);
      await counts.reserve('k', 'attempt-1');
      // The give-back is made and holds the window's row, uncommitted, while the count starts.
      await giver.connect();
      await giver.query('BEGIN');
      await giver.query(failureWindowStatements(`"${stores.schema}"`).giveBack, ['race:k', 'late', clock, 60_000]);
      const counted = counts.reserve('k', 'late');
      const waiting = async () =>
        (await stores.pool().query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%${stores.schema}%`])).rows[0].n;
      await vi.waitFor(async () => expect(await waiting()).toBe(1), { timeout: 5000, interval: 20 });
      await giver.query('COMMIT');
      expect((await counted).count).toBe(1);
      expect(await stores.givenBack('race', 'k', clock)).toEqual(['late']);
    } finally {
      await giver.end().catch(() => undefined);
      await stores.close();
    }
  });

  it('a count and a give-back cost the same however many ids a busy key remembers as given back', async () => {
    const clock = Date.now();
    const stores = postgresStores({ now: () => clock });
    try {
      const counts = failureWindows(stores.open(), 'busy', 900_000);
      await counts.reserve('nat', 'first');
      // A window of give-backs of one address where 2,000 users a minute sign in (15 minutes).
      await stores.pool().query(
        `INSERT INTO "${stores.schema}".oauth_given_back (key, id, until) SELECT 'busy:nat', 'login-' || n, $1::bigint + n FROM generate_series(1, 30000) n`,
        [clock],
      );
      expect((await counts.reserve('nat', 'login-20000')).count).toBe(1);
      const started = performance.now();
      for (let i = 0; i < 50; i++) {
        expect((await counts.reserve('nat', `next-${i}`)).count).toBe(2);
        await counts.giveBack('nat', `next-${i}`);
      }
      // About a millisecond each; statements that read or rewrite every id remembered take hundreds.
      expect((performance.now() - started) / 50).toBeLessThan(20);
      expect(await stores.givenBack('busy', 'nat', clock)).toHaveLength(30_050);
    } finally {
      await stores.close();
    }
  });
});
