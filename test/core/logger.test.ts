/**
 * The host's logger as it comes: pino and bunyan-style loggers get the fields first and the
 * message second, a Node Console gets one line per event, and an error keeps its stack under
 * `err`. Observed through a courier call whose upstream cannot be reached, on every adapter.
 */
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PlatformError } from '../../src/core/errors.js';
import { redact, safeLogger, type LogFields, type Logger } from '../../src/core/logger.js';
import { ADAPTERS } from '../support/apps.js';
import { SANDBOX_APP, basic } from '../support/courier.js';
import { serve } from '../support/net.js';
import { upstreamUnreachable, type FakeUpstream } from '../support/upstreams.js';

/** A writable that keeps what was written, as text. */
function memoryStream(): Writable & { text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return Object.assign(stream, { text: () => chunks.join('') });
}

/** Bunyan's calling convention: `log.warn(fields, message)`; records kept as bunyan hands them to its streams. */
function bunyanStyleLogger() {
  const records: Array<LogFields & { level: string; msg: string }> = [];
  const at = (level: string) => (fields: object, msg: string) => void records.push({ ...fields, level, msg });
  return { records, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') };
}

let unreachable: FakeUpstream;
beforeAll(async () => {
  unreachable = await upstreamUnreachable();
});
afterAll(async () => {
  await unreachable?.close();
});

describe.each(ADAPTERS)('a failed courier call in the host logger on $name', (adapter) => {
  const failCall = async (logger: Logger | undefined) => {
    const courier = { upstreamUrl: unreachable.url, credentials: { ...SANDBOX_APP }, retries: 0 };
    const served = await serve(adapter.build(logger === undefined ? { courier } : { logger, courier }));
    try {
      const res = await request(served.server).get('/courier/get_balance').set('authorization', basic(SANDBOX_APP.appId, SANDBOX_APP.appSecret));
      expect(res.status).toBe(502);
    } finally {
      await served.close();
    }
  };

  it('pino, writing to a stream, gets the fields and the error with its stack under err', async () => {
    const lines: string[] = [];
    await failCall(pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) }));
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'courier call failed',
        api: 'get_balance',
        ms: expect.any(Number),
        err: expect.objectContaining({
          type: expect.stringMatching(/UpstreamError$/),
          // The error's code, not mistaken for an authorization code.
          code: 'upstream_error',
          message: expect.stringMatching(/could not be reached/),
          stack: expect.stringMatching(/could not be reached[^]*\n\s+at /),
        }),
      }),
    ]);
  });

  it('a bunyan-style logger gets the fields and an Error it can serialize', async () => {
    const logger = bunyanStyleLogger();
    await failCall(logger);
    expect(logger.records).toHaveLength(1);
    const [record] = logger.records;
    expect(record).toMatchObject({ level: 'warn', msg: 'courier call failed', api: 'get_balance', ms: expect.any(Number) });
    expect(record!.err).toBeInstanceOf(Error);
    expect((record!.err as Error).stack).toMatch(/\n\s+at /);
  });

  it('a Node Console writes one line per event, the stack on that line', async () => {
    const stdout = memoryStream();
    const stderr = memoryStream();
    await failCall(new Console({ stdout, stderr }));
    const lines = stderr.text().split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[courier-platform\] courier call failed \{/);
    const fields = JSON.parse(lines[0]!.slice(lines[0]!.indexOf('{'))) as { api: string; err: { type: string; stack: string } };
    expect(fields.api).toBe('get_balance');
    expect(fields.err.stack).toMatch(/could not be reached[^]*\n\s+at /);
    expect(stdout.text()).toBe('');
  });

  it('without a logger, the warning is one line on console.warn', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      await failCall(undefined);
      expect(warn).toHaveBeenCalledTimes(1);
      const args = warn.mock.calls[0]!;
      expect(args).toHaveLength(1);
      expect(args[0]).toMatch(/^\[courier-platform\] courier call failed \{.*"stack":".*\\n\s+at /);
      expect(args[0]).not.toContain('\n');
    } finally {
      warn.mockRestore();
    }
  });
});

describe('redaction before the logger', () => {
  it('masks secret-named fields at any depth and leaves the rest', () => {
    expect(redact({ clientId: 'c1', client_secret: 's', nested: { authorization: 'Basic x', list: [{ sign: 'ABC', api: 'get_balance' }] } })).toEqual({
      clientId: 'c1',
      client_secret: '[redacted]',
      nested: { authorization: '[redacted]', list: [{ sign: '[redacted]', api: 'get_balance' }] },
    });
  });

  it('an error keeps its class, message and stack; its own fields and its cause are redacted', () => {
    class StoreError extends Error {
      password = 'hunter2';
      host = 'db.internal';
    }
    const cause = Object.assign(new Error('connect refused'), { token: 't-123' });
    const error = new StoreError('store down', { cause });
    const copy = redact(error) as StoreError;
    expect(copy).toBeInstanceOf(StoreError);
    expect(copy).not.toBe(error);
    expect(copy.message).toBe('store down');
    expect(copy.stack).toBe(error.stack);
    expect({ ...copy }).toEqual({ password: '[redacted]', host: 'db.internal' });
    expect(copy.cause).toBeInstanceOf(Error);
    expect(copy.cause).toMatchObject({ message: 'connect refused', token: '[redacted]' });
    expect(error.password).toBe('hunter2');
  });

  it("an error's code stays (a system error, a PlatformError), a `code` field anywhere else is masked as an authorization code", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED', errno: -111 });
    const answered = new PlatformError('store_unavailable', 'The store is unavailable', { cause: refused });
    const copy = redact({ err: answered, query: { code: 'SplxlOBeZQQYbYS6WxSbIA', state: 'xyz' }, code: 'Qcb0Orv1zh30vL1MPRsbm' }) as {
      err: PlatformError & { cause: Error & { code: string } };
      query: Record<string, string>;
      code: string;
    };
    expect(copy.err.code).toBe('store_unavailable');
    expect(copy.err.cause.code).toBe('ECONNREFUSED');
    expect(copy.query).toEqual({ code: '[redacted]', state: 'xyz' });
    expect(copy.code).toBe('[redacted]');
    // An error's secret fields are masked all the same.
    expect({ ...(redact(Object.assign(new Error('x'), { code: 'E1', token: 't-1' })) as object) }).toEqual({ code: 'E1', token: '[redacted]' });
  });

  it('a circular structure is cut at a fixed depth instead of reaching the logger', () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    expect(JSON.stringify(redact(loop))).toMatch(/"\[too deep\]"/);
  });

  it('pino never sees a secret, the stack still arrives', () => {
    const lines: string[] = [];
    const logger = safeLogger(pino({}, { write: (line: string) => void lines.push(line) }));
    const error = Object.assign(new Error('upstream failed'), { authorization: 'Basic c2VjcmV0' });
    logger.error({ err: error, appSecret: 'app-secret-1' }, 'call failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/c2VjcmV0|app-secret-1/);
    expect(JSON.parse(lines[0]!)).toMatchObject({ appSecret: '[redacted]', err: { type: 'Error', authorization: '[redacted]', stack: expect.stringMatching(/^Error: upstream failed\n/) } });
  });
});

describe('the Logger type', () => {
  it('accepts pino, console and (fields, message) functions; a (message, fields) logger does not compile', () => {
    const fromPino: Logger = pino({ enabled: false });
    const fromConsole: Logger = console;
    const log = (_fields: LogFields, _message: string) => {};
    const own: Logger = { debug: log, info: log, warn: log, error: log };
    const wrong = (_message: string, _fields?: LogFields) => {};
    // @ts-expect-error the fields come first, the message second
    const messageFirst: Logger = { debug: wrong, info: wrong, warn: wrong, error: wrong };
    expect([fromPino, fromConsole, own, messageFirst].every((logger) => typeof logger.warn === 'function')).toBe(true);
  });
});
