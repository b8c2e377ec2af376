/**
 * The store as the endpoints see it: only clients that may act, and codes and tokens as their
 * clients let them be served now (client-status.ts, docs/operator.md#applications).
 */
import { isActive, type ClientStatus } from './client-status.js';
import type { ResolvedLifetimes } from './context.js';
import { passThrough, type StoreLayer } from './store-layer.js';
import type { GrantBound, OAuthStore } from './store/types.js';

export function gateByClientStatus(store: OAuthStore, status: ClientStatus, lifetimes: ResolvedLifetimes): StoreLayer {
  const served = <T extends GrantBound>(token: T | undefined, lifetimeSeconds: number) => token && status.serve(token, lifetimeSeconds * 1000);
  return {
    ...passThrough(store),
    getClient: async (clientId) => {
      const client = await status.record(clientId);
      return isActive(client) ? client : undefined;
    },
    findCode: async (ref) => served(await store.findCode(ref), lifetimes.code),
    findAccessToken: async (ref) => served(await store.findAccessToken(ref), lifetimes.accessToken),
    findRefreshToken: async (ref) => served(await store.findRefreshToken(ref), lifetimes.refreshToken),
    // Only the answer that needs no store call stays synchronous: see verifyAccessToken in setup.ts.
    findAccessTokenSync: undefined,
  };
}
