/**
 * One courier call (billing_fee) three ways: straight to the sandbox, through a plain forwarder
 * that passes an already signed body, and through courier-platform, which validates and signs.
 */
import { md5Signer } from '../../src/courier/signing.js';
import { pairedRatio, summaryOf } from '../lib/report.js';
import type { Scenario, Target } from '../lib/scenario.js';
import { startServer, type ServerProcess } from '../lib/servers.js';

const APP_ID = 'bench-app';
const APP_SECRET = 'bench-secret';
const VERSION = '1.0';
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Both the sandbox and courier-platform serialise `{ code, message, data }` in that order. */
const isSuccessEnvelope = (body: string) => body.startsWith('{"code":0,');

function signed(api: string, params: Record<string, unknown>): string {
  const fields = { ...params, api, appId: APP_ID, version: VERSION };
  return JSON.stringify({ ...fields, sign: md5Signer(fields, APP_SECRET) });
}

/** A signed call straight to the sandbox, used at setup to read its dictionaries. */
async function upstreamData<T>(sandboxUrl: string, api: string): Promise<T> {
  const response = await fetch(sandboxUrl, { method: 'POST', headers: JSON_HEADERS, body: signed(api, {}) });
  const envelope = (await response.json()) as { code: number; message: string; data: T };
  if (envelope.code !== 0) throw new Error(`sandbox ${api} answered code ${envelope.code}: ${envelope.message}`);
  return envelope.data;
}

interface Mansion {
  mansionId: number;
  floors: { floorId: number }[];
}

/** A realistic estimate request: building and floor ids come from get_address, like a real client's. */
async function billingFeeParams(sandboxUrl: string): Promise<Record<string, unknown>> {
  const mansions = await upstreamData<Mansion[]>(sandboxUrl, 'get_address');
  const types = await upstreamData<{ expressTypeId: number }[]>(sandboxUrl, 'get_express_type');
  const customer = mansions[0];
  const sender = mansions[1] ?? customer;
  const expressType = types[0];
  if (!customer?.floors[0] || !sender?.floors[0] || !expressType) throw new Error('sandbox dictionaries are empty');
  return {
    orderTypeId: 2,
    sendTypeId: 21,
    fetchTypeId: 12,
    paymentId: 12,
    expressTypeId: expressType.expressTypeId,
    expressTagIds: 1,
    customerMansionId: customer.mansionId,
    customerFloorId: customer.floors[customer.floors.length - 1]!.floorId,
    customerHouseNumber: 'Room 1208',
    myMansionId: sender.mansionId,
    myFloorId: sender.floors[0].floorId,
    goodsWeight: 1.5,
    goodsCollection: 0,
    goodsPayment: 0,
  };
}

function post(id: string, label: string, url: string, body: string): Target {
  return { id, label, url, method: 'POST', headers: JSON_HEADERS, body, verify: isSuccessEnvelope };
}

export const courierScenario: Scenario = {
  name: 'courier',
  title: 'Courier call (POST billing_fee): direct vs plain forwarder vs courier-platform',
  notes: [
    'direct: the signed body straight to the sandbox. forwarder: Express 5 + http-proxy-middleware 3 (keep-alive agent) forwarding the same signed body, no validation or signing. courier-platform: Express 5 + `courierPlatform()` receiving the business fields only, validating with zod, signing with md5 and calling the sandbox over undici.',
    'Each server runs in its own child process; the sandbox is shared.',
  ],

  async setup() {
    const servers: ServerProcess[] = [];
    const teardown = async () => {
      await Promise.all(servers.map((server) => server.stop()));
    };
    try {
      const env = { BENCH_APP_ID: APP_ID, BENCH_APP_SECRET: APP_SECRET };
      const sandbox = await startServer('sandbox', 'sandbox.ts', env);
      servers.push(sandbox);
      const peers = await Promise.all([
        startServer('forwarder', 'forwarder.ts', { ...env, SANDBOX_URL: sandbox.url }),
        startServer('courier-platform', 'courier-platform.ts', { ...env, SANDBOX_URL: sandbox.url }),
      ]);
      servers.push(...peers);
      const [forwarder, platform] = peers as [ServerProcess, ServerProcess];

      const params = await billingFeeParams(sandbox.url);
      const signedBody = signed('billing_fee', params);
      return {
        targets: [
          post('direct', 'direct to sandbox', `${sandbox.url}/`, signedBody),
          post('forwarder', 'plain forwarder (http-proxy-middleware)', `${forwarder.url}/forward`, signedBody),
          post('platform', 'courier-platform', `${platform.url}/courier/billing_fee`, JSON.stringify(params)),
        ],
        teardown,
      };
    } catch (error) {
      await teardown();
      throw error;
    }
  },

  ratios(summary) {
    const direct = summaryOf(summary, 'direct');
    const platform = summaryOf(summary, 'platform');
    const throughput = pairedRatio(summary, 'platform', 'forwarder');
    const added = platform.p50Single - direct.p50Single;
    return [
      { label: 'courier-platform req/s ÷ forwarder req/s (32 connections)', value: throughput, unit: '', goal: '≥ 0.80', pass: throughput >= 0.8 },
      { label: 'courier-platform p50 − direct p50 (1 connection)', value: added, unit: 'ms', goal: '< 1 ms', pass: added < 1 },
    ];
  },
};
