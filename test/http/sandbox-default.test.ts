/**
 * Without upstreamUrl and without transport the proxy talks to the bundled sandbox in-process
 * (docs/sandbox.md): Basic Auth sandbox-app:sandbox-secret works, and a warning says so once.
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalString, type Signer } from '../../src/courier/signing.js';
import { SandboxCode } from '../../src/sandbox/index.js';
import { ADAPTERS } from '../support/apps.js';
import { SANDBOX_APP, basic, envelope, okData, orderBody } from '../support/courier.js';
import { capturingLogger, type LogRecord } from '../support/logger.js';
import { serve, type Served } from '../support/net.js';

/** Warnings about the built-in sandbox (other parts of the platform may warn about themselves). */
const sandboxWarnings = (records: readonly LogRecord[]) =>
  records.filter((record) => record.level === 'warn' && /sandbox/i.test(record.message));

describe.each(ADAPTERS)('built-in sandbox on $name', (adapter) => {
  const logger = capturingLogger();
  const auth = basic(SANDBOX_APP.appId, SANDBOX_APP.appSecret);
  let app: Served;
  let warningsAtConstruction = 0;

  beforeAll(async () => {
    const listener = adapter.build({ logger });
    warningsAtConstruction = sandboxWarnings(logger.records).length;
    app = await serve(listener);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('warns once, at construction, that calls go to the sandbox', () => {
    expect(warningsAtConstruction).toBe(1);
  });

  it('Basic Auth sandbox-app:sandbox-secret works for reads and writes', async () => {
    okData(await request(app.server).get('/courier/get_balance').set('authorization', auth));
    const created = okData(await request(app.server).post('/courier/create_order').set('authorization', auth).send(orderBody()));
    const logs = okData<unknown[]>(
      await request(app.server).post('/courier/query_order_logs').set('authorization', auth).send({ orderId: created.orderId }),
    );
    expect(logs.length).toBeGreaterThan(0);
  });

  it('the in-process sandbox still checks the signature', async () => {
    const res = await request(app.server).get('/courier/get_balance').set('authorization', basic(SANDBOX_APP.appId, 'nope'));
    expect(envelope(res, 200, 1).data).toEqual({ upstreamCode: SandboxCode.INVALID_SIGNATURE });
  });

  it('no credentials are configured, so a call without Basic Auth is 401', async () => {
    envelope(await request(app.server).get('/courier/get_balance'), 401, 1);
  });

  it('no further warning after the calls', () => {
    expect(sandboxWarnings(logger.records)).toHaveLength(1);
  });
});

it('docs/signing.md: the in-process sandbox checks signatures with a custom signer that answers lower-case hex', async () => {
  const sha256: Signer = (fields, appSecret) => createHash('sha256').update(`${canonicalString(fields)}&key=${appSecret}`, 'utf8').digest('hex');
  const app = await serve(ADAPTERS[0]!.build({ logger: capturingLogger(), courier: { signer: sha256 } }));
  try {
    okData(await request(app.server).get('/courier/get_balance').set('authorization', basic(SANDBOX_APP.appId, SANDBOX_APP.appSecret)));
    const wrong = await request(app.server).get('/courier/get_balance').set('authorization', basic(SANDBOX_APP.appId, 'nope'));
    expect(envelope(wrong, 200, 1).data).toEqual({ upstreamCode: SandboxCode.INVALID_SIGNATURE });
  } finally {
    await app.close();
  }
});

it('courier: {} also selects the in-process sandbox', async () => {
  const logger = capturingLogger();
  const served = await serve(ADAPTERS[0]!.build({ logger, courier: {} }));
  try {
    expect(sandboxWarnings(logger.records)).toHaveLength(1);
    okData(await request(served.server).get('/courier/get_express_type').set('authorization', basic(SANDBOX_APP.appId, SANDBOX_APP.appSecret)));
  } finally {
    await served.close();
  }
});
