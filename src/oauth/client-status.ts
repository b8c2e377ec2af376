/**
 * A suspended or deleted client stops at once (docs/operator.md): its client authentication
 * fails and its access tokens no longer verify anywhere (the guard, userinfo, introspection).
 * Each process keeps the client records it read for a few seconds, so neither a guarded call nor
 * a token request pays a store round trip for its client; the process that made a change forgets
 * at once, the others within `STATUS_TTL_MS`.
 */
import type { Clock } from '../core/clock.js';
import { deepFreeze } from '../core/deep-freeze.js';
import type { AccessTokenRecord, OAuthClientRecord, OAuthStore } from './store/types.js';

export const STATUS_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export const isActive = (client: OAuthClientRecord | undefined): client is OAuthClientRecord => client !== undefined && client.status !== 'suspended';

export interface ClientStatus {
  /** What this process knows now: `undefined` when it must ask the store. */
  cached(clientId: string): boolean | undefined;
  active(clientId: string): Promise<boolean>;
  /** The client's record (frozen), or undefined for an unknown client: from the store at most every `STATUS_TTL_MS`. */
  record(clientId: string): Promise<OAuthClientRecord | undefined>;
  /** After a change made here: the next check asks the store. */
  forget(clientId: string): void;
}

export function clientStatusCache(getClient: (clientId: string) => Promise<OAuthClientRecord | undefined>, now: Clock): ClientStatus {
  const known = new Map<string, { client: OAuthClientRecord | undefined; until: number }>();
  const entry = (clientId: string) => {
    const hit = known.get(clientId);
    if (!hit) return undefined;
    if (hit.until > now()) return hit;
    known.delete(clientId);
    return undefined;
  };
  const record = async (clientId: string) => {
    const hit = entry(clientId);
    if (hit) return hit.client;
    const client = deepFreeze(await getClient(clientId));
    // A bound without timers: past it, start over (each client costs one lookup again).
    if (known.size >= MAX_ENTRIES) known.clear();
    known.set(clientId, { client, until: now() + STATUS_TTL_MS });
    return client;
  };
  return {
    cached: (clientId) => {
      const hit = entry(clientId);
      return hit && isActive(hit.client);
    },
    active: async (clientId) => isActive(await record(clientId)),
    record,
    forget: (clientId) => known.delete(clientId),
  };
}

export function gateByClientStatus(store: OAuthStore, status: ClientStatus): OAuthStore {
  const ofActive = async (record: AccessTokenRecord | undefined) => (record && (await status.active(record.clientId)) ? record : undefined);
  const overrides: Partial<OAuthStore> = {
    getClient: async (clientId) => {
      const client = await status.record(clientId);
      return isActive(client) ? client : undefined;
    },
    findAccessToken: async (ref) => ofActive(await store.findAccessToken(ref)),
    // Only the answer that needs no store call stays synchronous: see verifyAccessToken.
    findAccessTokenSync: undefined,
  };
  return new Proxy(store, {
    get: (target, key, receiver) => (Object.hasOwn(overrides, key) ? overrides[key as keyof OAuthStore] : Reflect.get(target, key, receiver)),
  });
}
