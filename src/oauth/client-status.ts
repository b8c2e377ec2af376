/**
 * What a client's record decides about its codes and tokens, wherever one is accepted (the
 * guard, userinfo, introspection, the token endpoint; docs/operator.md#applications):
 * - a suspended or deleted client's tokens stop at once, and its client authentication fails;
 * - a token issued before the client's `tokensValidAfter` (its last resume) never works again;
 * - a token's scope is cut to the scopes the client has now (docs/oauth.md#tokens).
 * Each process keeps the client records it read for a few seconds, so neither a guarded call nor
 * a token request pays a store round trip for its client; the process that made a change forgets
 * at once, the others within `STATUS_TTL_MS`.
 */
import { BoundedCache } from '../core/cache.js';
import type { Clock } from '../core/clock.js';
import { deepFreeze } from '../core/deep-freeze.js';
import type { MaybePromise } from '../core/maybe-promise.js';
import { allowedScope } from './client-record.js';
import type { OAuthClientRecord } from './store/types.js';

export const STATUS_TTL_MS = 5_000;
/** Client records kept at most; past it the least recently used goes first. */
const MAX_ENTRIES = 10_000;

export const isActive = (client: OAuthClientRecord | undefined): client is OAuthClientRecord => client !== undefined && client.status !== 'suspended';

/** What the client's record is asked about a code or token. */
interface Issued {
  clientId: string;
  scope: string[];
  /** Ms since the epoch. */
  expiresAt: number;
}

/**
 * The token as `client` lets it be served now, or undefined. A token's issue time is its expiry
 * less the lifetime of its kind, so every kind (codes and refresh tokens too) is judged alike.
 */
export function servedToken<T extends Issued>(token: T, client: OAuthClientRecord | undefined, lifetimeMs: number): T | undefined {
  if (!isActive(client)) return undefined;
  if (client.tokensValidAfter !== undefined && token.expiresAt - lifetimeMs < client.tokensValidAfter) return undefined;
  // The guard's hot path: the token itself, unless a scope has to go.
  return allAllowed(token.scope, client.scopes) ? token : { ...token, scope: allowedScope(token.scope, client) };
}

function allAllowed(scope: readonly string[], allowed: readonly string[]): boolean {
  for (let i = 0; i < scope.length; i++) if (!allowed.includes(scope[i] as string)) return false;
  return true;
}

export interface ClientStatus {
  /** The client's record (frozen), or undefined for an unknown client: from the store at most every `STATUS_TTL_MS`. */
  record(clientId: string): Promise<OAuthClientRecord | undefined>;
  /** `servedToken` with the token's client: at once while this process knows the client's record. */
  serve<T extends Issued>(token: T, lifetimeMs: number): MaybePromise<T | undefined>;
  /** After a change made here: the next check asks the store. */
  forget(clientId: string): void;
}

/**
 * `pinned`: records that cannot change while the process runs (the configured clients, secrets
 * aside), answered at once so the memory store's guard stays synchronous for them.
 */
export function clientStatusCache(
  getClient: (clientId: string) => Promise<OAuthClientRecord | undefined>,
  now: Clock,
  pinned: ReadonlyMap<string, OAuthClientRecord> = new Map(),
): ClientStatus {
  const known = new BoundedCache<string, { client: OAuthClientRecord | undefined }>({ max: MAX_ENTRIES, ttlMs: STATUS_TTL_MS, now });
  const record = async (clientId: string) => {
    const hit = known.get(clientId);
    if (hit) return hit.client;
    const client = deepFreeze(await getClient(clientId));
    known.set(clientId, { client });
    return client;
  };
  return {
    record,
    serve: (token, lifetimeMs) => {
      const hit = pinned.has(token.clientId) ? { client: pinned.get(token.clientId) } : known.get(token.clientId);
      if (hit) return servedToken(token, hit.client, lifetimeMs);
      return record(token.clientId).then((client) => servedToken(token, client, lifetimeMs));
    },
    forget: (clientId) => known.delete(clientId),
  };
}
