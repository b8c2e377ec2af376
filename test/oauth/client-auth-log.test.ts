/**
 * RFC 6749 2.3.1: a failed client authentication is logged (docs/oauth.md#clients). The log line
 * carries the client id a caller sent only when a client could have it, so no caller can write
 * megabytes of log a request with a made-up id.
 */
import { afterEach, expect, it } from 'vitest';
import { capturingLogger } from '../support/logger.js';
import { closeHosts, CONFIDENTIAL, startHost } from '../http/quota-helpers.js';

afterEach(closeHosts);

it('logs a failed client authentication with the id sent when it could be a client id, its length otherwise', async () => {
  const logger = capturingLogger();
  const h = await startHost('express', { logger, quota: {} });
  const revoke = (clientId: string) => h.http().post('/oauth/revoke').type('form').send({ token: 'x', client_id: clientId });

  expect((await revoke(CONFIDENTIAL.id)).status).toBe(401);
  const huge = 'a'.repeat(60_000);
  expect((await revoke(huge)).status).toBe(401);

  const failures = logger.records.filter((r) => r.message === 'client authentication failed').map((r) => JSON.parse(r.line) as Record<string, unknown>);
  expect(failures).toEqual([expect.objectContaining({ clientId: CONFIDENTIAL.id }), expect.objectContaining({ clientIdLength: 60_000 })]);
  expect(logger.text().length).toBeLessThan(10_000);
});
