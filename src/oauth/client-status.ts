/**
 * A suspended or deleted client stops at once (docs/operator.md): its client authentication
 * fails and its access tokens no longer verify anywhere (the guard, userinfo, introspection).
 * Each process keeps what it learned of a client's status for a few seconds, so a guarded call
 * costs no extra store round trip; the process that made a change forgets at once, the others
 * within `STATUS_TTL_MS`.
 */
import type { Clock } from '../core/clock.js';
import type { AccessTokenRecord, OAuthClientRecord, OAuthStore } from './store/types.js';

export const STATUS_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export const isActive = (client: OAuthClientRecord | undefined): client is OAuthClientRecord => client !== undefined && client.status !== 'suspended';

export interface ClientStatus {
  /** What this process knows now: `undefined` when it must ask the store. */
  cached(clientId: string): boolean | undefined;
  active(clientId: string): Promise<boolean>;
  /** After a change made here: the next check asks the store. */
  forget(clientId: string): void;
}

export function clientStatusCache(getClient: (clientId: string) => Promise<OAuthClientRecord | undefined>, now: Clock): ClientStatus {
  const known = new Map<string, { active: boolean; until: number }>();
  const cached = (clientId: string) => {
    const entry = known.get(clientId);
    if (!entry) return undefined;
    if (entry.until > now()) return entry.active;
    known.delete(clientId);
    return undefined;
  };
  return {
    cached,
    async active(clientId) {
      const hit = cached(clientId);
      if (hit !== undefined) return hit;
      const active = isActive(await getClient(clientId));
      // A bound without timers: past it, start over (each client costs one lookup again).
      if (known.size >= MAX_ENTRIES) known.clear();
      known.set(clientId, { active, until: now() + STATUS_TTL_MS });
      return active;
    },
    forget: (clientId) => known.delete(clientId),
  };
}

/**
 * The store as the endpoints see it: a suspended client is unknown, and a token of a client
 * that is not active is not found. Everything else passes through.
 */
export function gateByClientStatus(store: OAuthStore, status: ClientStatus): OAuthStore {
  const ofActive = async (record: AccessTokenRecord | undefined) => (record && (await status.active(record.clientId)) ? record : undefined);
  const overrides: Partial<OAuthStore> = {
    getClient: async (clientId) => {
      const client = await store.getClient(clientId);
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
