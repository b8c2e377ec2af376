/**
 * The OAuth store as the server composes it (store-pipeline.ts): what each layer answers, and
 * that the memory store's lookups stay synchronous through them, so the quota guard validates a
 * token without a promise (docs/performance.md).
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, StoreUnavailableError } from '../../src/core/errors.js';
import { createStoreGuard } from '../../src/core/store-guard.js';
import { createStoreLane } from '../../src/core/store-lane.js';
import { composeOAuthStore } from '../../src/oauth/store-pipeline.js';
import { createMemoryOAuthStore } from '../../src/oauth/store/memory.js';
import type { OAuthClientRecord, OAuthStore } from '../../src/oauth/store/types.js';
import { capturingLogger } from '../support/logger.js';
import { BASE_TIME, issueGrant } from './store-conformance.js';

const LIFETIMES = { code: 60, accessToken: 3600, refreshToken: 86_400, idToken: 3600 };
const client = (id: string, overrides: Partial<OAuthClientRecord> = {}): OAuthClientRecord => ({
  id,
  name: id,
  redirectUris: ['https://app.example/callback'],
  scopes: ['openid', 'profile', 'offline_access'],
  grants: ['authorization_code', 'refresh_token'],
  ...overrides,
});
const CONFIGURED = client('configured');

function layersOver(raw: OAuthStore, lane?: ReturnType<typeof createStoreLane>) {
  const logger = capturingLogger();
  const guard = createStoreGuard({ name: 'OAuth store (test)', timeoutMs: 1000, logger, ...(lane ? { lane } : {}) });
  const layers = composeOAuthStore(raw, {
    guard,
    configured: { ids: new Set([CONFIGURED.id]), records: async () => [CONFIGURED], pinned: new Map([[CONFIGURED.id, CONFIGURED]]) },
    now: () => BASE_TIME,
    lifetimes: LIFETIMES,
  });
  return { layers, logger };
}

describe('the composed OAuth store', () => {
  it('answers the memory store lookups of the quota guard synchronously, configured clients as active', async () => {
    const raw = createMemoryOAuthStore({ now: () => BASE_TIME, clients: [client('client-1'), client('paused', { status: 'suspended' })] });
    const { layers } = layersOver(raw);
    const { access } = await issueGrant(raw);
    const record = layers.clients.findAccessTokenSync?.(access.ref);
    expect(record).toBe(raw.findAccessTokenSync(access.ref));
    expect(record?.clientId).toBe('client-1');
    expect(layers.clients.clientStatusSync?.('client-1')).toBe('active');
    expect(layers.clients.clientStatusSync?.('paused')).toBe('suspended');
    expect(layers.clients.clientStatusSync?.(CONFIGURED.id)).toBe('active');
    // The endpoints' view judges the client first, which may need a store call.
    expect(layers.endpoints.findAccessTokenSync).toBeUndefined();
  });

  it('has no synchronous lookup in any layer over a store without them', () => {
    const { findAccessTokenSync, clientStatusSync, ...remote } = createMemoryOAuthStore();
    void findAccessTokenSync;
    void clientStatusSync;
    const { layers } = layersOver(remote);
    for (const layer of [layers.guarded, layers.clients, layers.endpoints]) {
      expect(layer.findAccessTokenSync).toBeUndefined();
      expect(layer.clientStatusSync).toBeUndefined();
    }
  });

  it('answers a failing store with a 503 store_unavailable through every layer, and logs the outage once', async () => {
    const raw = createMemoryOAuthStore();
    const broken: OAuthStore = { ...raw, getClient: () => Promise.reject(new Error('connection reset')), revokeGrant: () => Promise.reject(new Error('connection reset')) };
    const { layers, logger } = layersOver(broken);
    await expect(layers.endpoints.getClient('client-1')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(layers.endpoints.revokeGrant('grant-1')).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(logger.records.filter((r) => r.level === 'warn').map((r) => r.message)).toEqual(['OAuth store (test) unavailable: answering 503 until it is back']);
  });

  it('with a lane, calls the store only once a connection is free', async () => {
    const lane = createStoreLane(1, 5_000);
    const raw = createMemoryOAuthStore({ clients: [client('client-1')] });
    const asked: string[] = [];
    const counted: OAuthStore = { ...raw, getClient: (id) => (asked.push(id), raw.getClient(id)) };
    const { layers } = layersOver(counted, lane);
    const release = await lane.enter('other store');
    const answer = layers.clients.getClient('client-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toEqual([]);
    release();
    expect((await answer)?.id).toBe('client-1');
    expect(asked).toEqual(['client-1']);
  });

  it('answers a configured client from the options, refuses to save one over it, and hides a suspended client from the endpoints', async () => {
    const raw = createMemoryOAuthStore({ clients: [client('paused', { status: 'suspended' })] });
    const { layers } = layersOver(raw);
    expect(await layers.endpoints.getClient(CONFIGURED.id)).toEqual(CONFIGURED);
    const refused = await layers.clients.saveClient({ ...CONFIGURED, name: 'Impostor' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect(refused).toMatchObject({ code: 'invalid_client_record', field: 'id' });
    expect(await raw.getClient(CONFIGURED.id)).toBeUndefined();
    expect((await layers.clients.getClient('paused'))?.status).toBe('suspended');
    expect(await layers.endpoints.getClient('paused')).toBeUndefined();
  });
});
