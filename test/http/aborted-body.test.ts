/**
 * A caller that closes its connection before the body it announced has arrived (RFC 9112 6.3:
 * an incomplete message): the caller's doing. No host logs it as a server error, so no caller
 * can fill the error log or trip an alert by hanging up (docs/errors.md). The request is still
 * the caller's, from the caller's address: a wrong admin token in it counts against that address
 * (docs/operator.md#wrong-tokens), not a shared "unknown" caller, and no warning says it came
 * without one (docs/deployment.md#clientip).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { capturingLogger } from '../support/logger.js';
import { ADAPTER_NAMES, closeHosts, startHost } from './quota-helpers.js';

afterEach(closeHosts);

const TOKEN = 'operator-token-0123456789abcdef0123456789';

/** Sends the head and the start of a body of 1000 bytes, then closes the connection. */
function hangUpMidBody(origin: string, head: string, start: string): Promise<void> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`${head}\r\nHost: ${hostname}:${port}\r\nContent-Length: 1000\r\n\r\n${start}`);
      setTimeout(() => socket.destroy(), 100);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

describe.each(ADAPTER_NAMES)('a body cut short by the caller, on %s', (adapter) => {
  it('is no server error in the log', async () => {
    const logger = capturingLogger();
    const h = await startHost(adapter, { logger, quota: {} });
    await hangUpMidBody(h.origin, 'POST /oauth/token HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded', 'grant_type=');
    // An absence is asserted: the host hears of the close after the socket is gone here, so its
    // answer (or its log line) is given time to come.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await h.http().get('/oauth/jwks')).status).toBe(200);
    expect(logger.records.filter((r) => r.level === 'error').map((r) => r.message)).toEqual([]);
  });

  it("is counted from the caller's address: a wrong admin token against it, with no warning of a request without one", async () => {
    const logger = capturingLogger();
    const h = await startHost(adapter, { logger, quota: {}, platform: { admin: { token: TOKEN } } });
    await hangUpMidBody(h.origin, `POST /admin/clients HTTP/1.1\r\nAuthorization: Bearer wrong-${TOKEN}\r\nContent-Type: application/json`, '{"name":');
    const wrongTokens = () => logger.records.filter((r) => r.message.startsWith('admin: wrong admin tokens'));
    // The host hears of the close after the socket is gone: its log line is given time to come.
    await expect.poll(() => wrongTokens().length, { timeout: 2000 }).toBe(1);
    expect(JSON.parse(wrongTokens()[0]!.line)).toMatchObject({ address: '127.0.0.1', failures: 1 });
    expect(logger.records.filter((r) => r.message.includes('no caller address'))).toEqual([]);
  });
});
