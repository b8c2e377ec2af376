/**
 * Wrong admin tokens (docs/operator.md#wrong-tokens): through HTTP on every adapter, a guesser
 * on one loopback address is limited after ADMIN_TOKEN_FAILURES and logged once, without the
 * token, while the operator on another address keeps working; and the log's pacing, with a
 * clock of its own.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN_FAILURES, ADMIN_TOKEN_WINDOW_SECONDS, failedTokenLog } from '../../src/admin/failed-tokens.js';
import type { Logger } from '../../src/core/logger.js';
import { capturingLogger } from '../support/logger.js';
import { ADAPTER_NAMES, closeHosts, startHost } from '../oauth/compliance/helpers.js';

afterEach(closeHosts);

const TOKEN = 'operator-token-0123456789abcdef0123456789';
const GUESSER = '127.0.0.9';
const OPERATOR = '127.0.0.1';

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { code: number; message: string };
}

/** GET `{admin}/clients` with a Bearer token, sent from `localAddress`. */
function listClients(origin: string, token: string, localAddress: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/admin/clients`, { localAddress, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body: JSON.parse(text) as Answer['body'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(ADAPTER_NAMES)('wrong admin tokens on %s', (adapter) => {
  it('300 guesses from one address: 403 up to the limit, then 429 with Retry-After, one log line, the operator elsewhere unaffected', async () => {
    const logger = capturingLogger();
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN }, logger } });
    const guesses = Array.from({ length: 300 }, (_, i) => `${TOKEN.slice(0, -4)}${String(i).padStart(4, '0')}`);
    const answers: Answer[] = [];
    const started = Date.now();
    // Ten at a time, as a scripted guesser would.
    for (let i = 0; i < guesses.length; i += 10) answers.push(...(await Promise.all(guesses.slice(i, i + 10).map((guess) => listClients(host.origin, guess, GUESSER)))));
    const seconds = (Date.now() - started) / 1000;

    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 403)).toHaveLength(ADMIN_TOKEN_FAILURES);
    expect(statuses.filter((status) => status === 429)).toHaveLength(300 - ADMIN_TOKEN_FAILURES);
    const limited = answers.filter((answer) => answer.status === 429);
    for (const answer of limited) {
      expect(Number(answer.retryAfter)).toBeGreaterThan(ADMIN_TOKEN_WINDOW_SECONDS - seconds - 5);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(ADMIN_TOKEN_WINDOW_SECONDS);
      expect(answer.body).toMatchObject({ code: 1, message: expect.stringMatching(/Too many wrong admin tokens.*retry in \d+ seconds/) });
    }

    // The operator's right token from another address is not blocked; the guesser's address is, even with the right token.
    expect((await listClients(host.origin, TOKEN, OPERATOR)).status).toBe(200);
    expect((await listClients(host.origin, TOKEN, GUESSER)).status).toBe(429);

    const lines = logger.records.filter((record) => record.message.startsWith('admin: wrong admin tokens'));
    expect(lines.map((line) => [line.level, JSON.parse(line.line)])).toEqual([
      ['warn', expect.objectContaining({ address: GUESSER, failures: 1, refused: 0, intervalSeconds: 60 })],
    ]);
    expect(logger.text()).not.toContain(TOKEN.slice(0, -4));
  });

  it('a right token gives its reservation back: the operator is never limited by its own calls', async () => {
    const host = await startHost(adapter, { platform: { admin: { token: TOKEN } } });
    for (let i = 0; i < ADMIN_TOKEN_FAILURES - 1; i++) expect((await listClients(host.origin, 'wrong-token', OPERATOR)).status).toBe(403);
    for (let i = 0; i < 2 * ADMIN_TOKEN_FAILURES; i++) expect((await listClients(host.origin, TOKEN, OPERATOR)).status).toBe(200);
    expect((await listClients(host.origin, 'wrong-token', OPERATOR)).status).toBe(403);
    expect((await listClients(host.origin, TOKEN, OPERATOR)).status).toBe(429);
  });
});

describe('wrong admin tokens from IPv6 callers', () => {
  it('count by the /56, as the OAuth limits do: fresh addresses in one /56 are limited, another /56 is not', async () => {
    const host = await startHost('express', {
      platform: { admin: { token: TOKEN }, clientIp: (request) => request.headers['x-test-ip'] as string },
    });
    const from = async (ip: string, token: string) => (await host.http().get('/admin/clients').set({ authorization: `Bearer ${token}`, 'x-test-ip': ip })).status;
    const statuses: number[] = [];
    for (let i = 0; i < ADMIN_TOKEN_FAILURES + 2; i++) statuses.push(await from(`2001:db8:0:1200:${i.toString(16)}::1`, 'wrong-token'));
    expect(statuses).toEqual([...Array(ADMIN_TOKEN_FAILURES).fill(403), 429, 429]);
    expect(await from('2001:db8:0:1300::1', TOKEN)).toBe(200);
  });
});

describe('the wrong-token log', () => {
  function recordingLogger() {
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (fields) => void lines.push(fields) };
    return { logger, lines };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the first event of an address at once, then at most one line per interval counting what came since', () => {
    vi.useFakeTimers();
    const { logger, lines } = recordingLogger();
    const log = failedTokenLog(logger, { intervalMs: 60_000 });
    log('10.0.0.1', 'failures');
    expect(lines).toEqual([{ address: '10.0.0.1', failures: 1, refused: 0, intervalSeconds: 60 }]);
    for (let i = 0; i < 9; i++) log('10.0.0.1', 'failures');
    for (let i = 0; i < 290; i++) log('10.0.0.1', 'refused');
    log('10.0.0.2', 'failures');
    expect(lines).toHaveLength(2);
    vi.advanceTimersByTime(59_999);
    expect(lines).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(lines.slice(2)).toEqual([{ address: '10.0.0.1', failures: 9, refused: 290, intervalSeconds: 60 }]);
    // A quiet interval writes nothing; the next event after it is written at once again.
    vi.advanceTimersByTime(120_000);
    expect(lines).toHaveLength(3);
    log('10.0.0.1', 'refused');
    expect(lines.slice(3)).toEqual([{ address: '10.0.0.1', failures: 0, refused: 1, intervalSeconds: 60 }]);
  });

  it('tracks a bounded number of addresses; past it, new ones share one line', () => {
    vi.useFakeTimers();
    const { logger, lines } = recordingLogger();
    const log = failedTokenLog(logger, { intervalMs: 60_000, maxAddresses: 3 });
    for (let i = 0; i < 8; i++) log(`addr-${i}`, 'failures');
    expect(lines.map((line) => line.address)).toEqual(['addr-0', 'addr-1', 'addr-2', 'other addresses']);
    expect(lines.at(-1)).toMatchObject({ address: 'other addresses', failures: 1 });
    vi.advanceTimersByTime(60_000);
    expect(lines.at(-1)).toMatchObject({ address: 'other addresses', failures: 4 });
  });
});
