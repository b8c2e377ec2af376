/**
 * The brute-force counters on a PostgreSQL pool under a flood of wrong secrets (docs/stores.md,
 * "The local queue"; docs/deployment.md, "When a store is down"). Every counter query takes its
 * connection through the pool's local queue, like every other store call: a flood is load, shed
 * with 503 and `Retry-After` past the queue's bound, never an outage, never a crash, and calls
 * outside the flood keep their connections. The pool is as small as a busy one gets, with a
 * `connectionTimeoutMillis` that pg applies to callers waiting in its own queue.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { header } from '../../src/core/http.js';
import { MAX_WAIT_MS } from '../../src/core/store-lane.js';
import { createPostgresOAuthStore } from '../../src/oauth/store/index.js';
import { createLoginThrottle } from '../../src/oauth/login-throttle.js';
import { postFormFrom, type Answer } from '../support/from-address.js';
import { capturingLogger } from '../support/logger.js';
import { cheapClients } from '../support/oauth.js';
import { databaseUrl, describePostgres, uniqueName } from '../support/services.js';
import { basic, closeHosts, SERVICE, startHost } from './compliance/helpers.js';

const FLOOD = 400;

describePostgres('the brute-force counters on a busy PostgreSQL pool', { timeout: 60_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await closeHosts();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  /** A pool of `max` connections and a schema of the test's own, both gone after it. */
  const poolAndSchema = (label: string, config: pg.PoolConfig) => {
    const schema = uniqueName(label);
    const pool = new pg.Pool({ connectionString: databaseUrl, ...config });
    cleanups.push(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    });
    return { pool, schema };
  };

  /**
   * Opens the pool's `count` connections before the platform starts. pg applies
   * `connectionTimeoutMillis` to opening a connection too, and on a busy machine opening one can
   * take longer than the 100 ms the flood's pool allows: that would be a slow start, not the
   * flood this file is about.
   */
  const openConnections = async (pool: pg.Pool, count: number) => {
    for (let tries = 1; ; tries++) {
      const opened = await Promise.allSettled(Array.from({ length: count }, () => pool.connect()));
      for (const result of opened) if (result.status === 'fulfilled') result.value.release();
      if (opened.every((result) => result.status === 'fulfilled')) return;
      if (tries === 20) throw new Error(`could not open ${count} connections to ${databaseUrl}`);
    }
  };

  /** The wrong-secret flood's host: the caller's address from a test header. */
  const floodHost = (pool: pg.Pool, schema: string, logger: ReturnType<typeof capturingLogger>, oauth: { storeTimeoutMs?: number } = {}) =>
    cheapClients().then((clients) =>
      startHost('express', {
        oauth: { store: createPostgresOAuthStore({ pool, schema }), clients, ...oauth },
        platform: { logger, clientIp: (request) => header(request, 'x-test-ip') },
      }),
    );

  it('RFC 6749 10.10: 400 concurrent wrong secrets from 400 addresses on 2 connections are load: 401 or 503 with Retry-After, no outage, and a token is still served', async () => {
    const { pool, schema } = poolAndSchema('bruteforce_pool', { max: 2, min: 2, connectionTimeoutMillis: 100 });
    await openConnections(pool, 2);
    await createPostgresOAuthStore({ pool, schema }).migrate();
    const logger = capturingLogger();
    const host = await floodHost(pool, schema, logger);
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    cleanups.push(async () => void process.off('unhandledRejection', record));
    const token = (ip: string, secret: string) =>
      postFormFrom('127.0.0.1', `${host.origin}/oauth/token`, { grant_type: 'client_credentials' }, { authorization: basic(SERVICE.id, secret), 'x-test-ip': ip });

    // Every counter query waits in the pool's local queue, never in pg's own (docs/stores.md#the-local-queue).
    let mostWaiting = 0;
    const watch = setInterval(() => (mostWaiting = Math.max(mostWaiting, pool.waitingCount)), 1);
    const answers: Answer[] = await Promise.all(Array.from({ length: FLOOD }, (_, i) => token(`198.51.${i >> 8}.${i & 255}`, `wrong-secret-${i}`))).finally(() =>
      clearInterval(watch),
    );
    // A rejection nobody handled ends a Node process: give one a turn to surface.
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(unhandled).toEqual([]);
    expect(mostWaiting).toBe(0);
    for (const res of answers) {
      expect([401, 503], JSON.stringify(res.body)).toContain(res.status);
      if (res.status === 503) {
        expect(res.body.error).toBe('temporarily_unavailable');
        expect(res.headers['retry-after']).toBe('1');
      }
    }
    expect(answers.filter((res) => res.status === 401).length).toBeGreaterThan(0);
    expect(logger.records.filter((entry) => entry.message.includes('unavailable'))).toEqual([]);
    const served = await token('192.0.2.1', SERVICE.secret);
    expect(served.status, JSON.stringify(served.body)).toBe(200);
  });

  it('an attempt that waits its turn in the local queue longer than the deadline is load, not an outage (docs/stores.md#the-local-queue)', async () => {
    const { pool, schema } = poolAndSchema('bruteforce_wait', { max: 1, min: 1 });
    // The tables exist before the platform starts, so its start-up calls fit the short deadline below.
    await createPostgresOAuthStore({ pool, schema }).migrate();
    const logger = capturingLogger();
    // One connection: the last of 600 attempts waits its turn for longer than the deadline. The
    // deadline leaves a statement on a busy machine room to answer: a statement later than twice
    // the deadline, with no other answer meanwhile, is a silent store (docs/stores.md#deadlines-and-outages).
    const storeTimeoutMs = 400;
    const host = await floodHost(pool, schema, logger, { storeTimeoutMs });
    const token = (ip: string, secret: string) =>
      postFormFrom('127.0.0.1', `${host.origin}/oauth/token`, { grant_type: 'client_credentials' }, { authorization: basic(SERVICE.id, secret), 'x-test-ip': ip });

    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 600 }, (_, i) => token(`203.0.${i >> 8}.${i & 255}`, `wrong-secret-${i}`).then((res) => ({ res, at: performance.now() - started }))),
    );

    expect(Math.max(...answers.map(({ at }) => at)), 'the last attempt waited longer than the deadline').toBeGreaterThan(2 * storeTimeoutMs);
    // Within the queue's own bound every attempt is answered; past it (a machine too loaded to
    // serve 600 attempts in 10 s) the queue sheds the rest as load: 503 with Retry-After.
    expect(answers.filter(({ res, at }) => at < MAX_WAIT_MS && res.status !== 401).map(({ res }) => res.status)).toEqual([]);
    for (const { res } of answers.filter(({ res }) => res.status !== 401)) {
      expect([res.status, res.body.error, res.headers['retry-after']]).toEqual([503, 'temporarily_unavailable', '1']);
    }
    expect(logger.records.filter((entry) => entry.message.includes('unavailable'))).toEqual([]);
  });

  it("createLoginThrottle({ store }): a burst of logins waits in the pool's local queue, never in pg's own", async () => {
    const { pool, schema } = poolAndSchema('login_pool', { max: 2, min: 2 });
    const logins = createLoginThrottle({ store: createPostgresOAuthStore({ pool, schema }) });
    await (await logins.attempt('warm-up', '192.0.2.1')).succeeded();

    // Time in pg's queue would count against the deadlines of the platform's calls on the same pool.
    let mostWaiting = 0;
    const watch = setInterval(() => (mostWaiting = Math.max(mostWaiting, pool.waitingCount)), 1);
    const attempts = await Promise.all(Array.from({ length: 60 }, (_, i) => logins.attempt(`user-${i}`, `198.51.100.${i}`))).finally(() => clearInterval(watch));

    expect(attempts.map((attempt) => attempt.retryAfter)).toEqual(Array.from({ length: 60 }, () => 0));
    expect(mostWaiting).toBe(0);
  });

  it("createLoginThrottle({ store }): a store that hangs while logins hold the pool's connections is an outage the platform answers 503 at its deadline, and it heals (docs/stores.md#the-local-queue)", async () => {
    const { pool, schema } = poolAndSchema('login_hang', { max: 2, min: 2 });
    await createPostgresOAuthStore({ pool, schema }).migrate();
    const logger = capturingLogger();
    const host = await floodHost(pool, schema, logger, { storeTimeoutMs: 200 });
    const logins = createLoginThrottle({ store: createPostgresOAuthStore({ pool, schema }) });
    await (await logins.attempt('warm-up', '192.0.2.1')).succeeded();
    const token = () =>
      postFormFrom('127.0.0.1', `${host.origin}/oauth/token`, { grant_type: 'client_credentials' }, { authorization: basic(SERVICE.id, SERVICE.secret), 'x-test-ip': '192.0.2.2' });
    expect((await token()).status).toBe(200);

    // The store stops answering: every query on its tables waits for this lock.
    const locker = new pg.Client({ connectionString: databaseUrl });
    await locker.connect();
    cleanups.unshift(async () => void (await locker.end().catch(() => undefined)));
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${schema}".oauth_grants, "${schema}".oauth_failure_windows IN ACCESS EXCLUSIVE MODE`);
    const attempts = Array.from({ length: 4 }, (_, i) => logins.attempt(`user-${i}`, `198.51.100.${i}`).then(() => 'counted', () => 'rejected'));
    await new Promise((resolve) => setTimeout(resolve, 100));

    const answer = await Promise.race([token(), new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 6000))]);
    await locker.query('COMMIT');

    expect(answer).not.toBe('still waiting');
    expect((answer as Answer).status).toBe(503);
    expect(logger.records.filter((entry) => entry.message.includes('unavailable')).length).toBe(1);
    expect(await Promise.all(attempts)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    let healed: Answer | undefined;
    for (let i = 0; i < 50 && healed?.status !== 200; i++) {
      healed = await token();
      if (healed.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(healed?.status, JSON.stringify(healed?.body)).toBe(200);
    expect((await logins.attempt('user-after', '198.51.100.9')).retryAfter).toBe(0);
  });
});
