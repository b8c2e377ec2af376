/**
 * Known callers (docs/oauth.md, "Brute-force limits"): the exact addresses that proved a client's
 * secret recently. The limits count an IPv6 caller by its /56, which a hosting provider splits
 * among many customers; when a neighbour's guesses fill that count, a known caller of the client
 * is judged by the failures of its own address instead (client-auth.ts). The login throttle keeps
 * its own marks, per user name, of the addresses that signed the user in (login-throttle.ts).
 * Nobody becomes known without the secret or the password, so a guesser gains nothing from it.
 *
 * The marks live where the failure windows do (failure-windows.ts), so every process on a Redis or
 * PostgreSQL store knows a caller any one of them saw: a client's backend that asks for a token
 * once an hour, of whichever process, stays known. Per client the most recent marks only are
 * kept, each for its lifetime from its last write.
 */
import { createHash } from 'node:crypto';
import { countedAddress, exactAddress } from '../core/client-address.js';
import { BoundedCache } from '../core/cache.js';
import { sharedWindowsOf } from './failure-windows.js';
import { KNOWN_CALLER, REMEMBER_CALLER } from './store/redis-scripts.js';
import type { OAuthStore } from './store/types.js';

export interface KnownCallerMarks {
  /** Whether `caller` proved the client's secret within a mark's lifetime (and is among its most recent). */
  isKnown(clientId: string, caller: string): Promise<boolean>;
  /** Marks `caller` as known to the client from now for a mark's lifetime; the oldest mark beyond `most` goes. */
  remember(clientId: string, caller: string): Promise<void>;
}

export interface KnownCallerOptions {
  /** How long a mark lasts from its last write, in ms. */
  lifetimeMs: number;
  /** Marks kept per client at most: the most recent. */
  most: number;
  /** Names the marks, so two users of one store keep apart. */
  name: string;
  /** The clock of marks kept in memory (a shared store uses its own). */
  now: () => number;
}

/** A caller's address as the limits count it (an IPv6 address by its /56) and its own. */
export interface Caller {
  readonly counted: string;
  readonly exact: string;
}

export function callerAt(ip: string): Caller {
  return { counted: countedAddress(ip), exact: exactAddress(ip) };
}

/**
 * The limits count more than the caller's own address: an IPv6 /56. Only such a caller is
 * marked: elsewhere (an IPv4 address, behind one NAT) whoever shares the address is the same
 * caller to the limits, known or not.
 */
export function ownAddress(caller: Caller): boolean {
  return caller.exact !== caller.counted;
}

/** Marks kept per client: a client calling from more addresses keeps the most recent of them. */
export const KNOWN_CALLERS_PER_CLIENT = 32;

/** Fixed length whatever the caller sent, and no client id or address in the clear. */
const hashed = (value: string) => createHash('sha256').update(value).digest('base64url');

/** On the store's Redis or PostgreSQL, shared by every process on it; in process memory for other stores. */
export function knownCallerMarks(store: OAuthStore | undefined, options: KnownCallerOptions): KnownCallerMarks {
  const shared = sharedWindowsOf(store);
  const { lifetimeMs, most, name } = options;
  if (shared?.kind === 'redis') {
    const key = (clientId: string) => `${shared.keyPrefix}known-callers:${name}:{${hashed(clientId)}}`;
    return {
      isKnown: async (clientId, caller) => Number(await shared.run(KNOWN_CALLER, [key(clientId)], [hashed(caller), shared.now()])) === 1,
      async remember(clientId, caller) {
        await shared.run(REMEMBER_CALLER, [key(clientId)], [hashed(caller), shared.now(), lifetimeMs, most]);
      },
    };
  }
  if (shared?.kind === 'postgres') {
    const client = (clientId: string) => `${name}:${hashed(clientId)}`;
    return {
      async isKnown(clientId, caller) {
        const { rows } = await shared.query(shared.statements.knownCaller, [client(clientId), hashed(caller), shared.now()]);
        return rows.length > 0;
      },
      async remember(clientId, caller) {
        await shared.query(shared.statements.rememberCaller, [client(clientId), hashed(caller), shared.now(), lifetimeMs, most]);
        shared.written();
      },
    };
  }
  return memoryMarks(options);
}

/**
 * In this process: per client, a Map of callers to when each mark ends, in the order written (a
 * renewed mark is moved to the end), so the oldest are at its front. Only a caller with the secret
 * (or the password) adds a mark, so the clients held are the store's own clients (or the users
 * who signed in), each with `most` marks at most.
 */
function memoryMarks({ lifetimeMs, most, now }: KnownCallerOptions): KnownCallerMarks {
  const clients = new Map<string, Map<string, number>>();
  return {
    async isKnown(clientId, caller) {
      return (clients.get(clientId)?.get(caller) ?? 0) > now();
    },
    async remember(clientId, caller) {
      const at = now();
      const marks = clients.get(clientId) ?? new Map<string, number>();
      marks.delete(caller);
      marks.set(caller, at + lifetimeMs);
      for (const [other, ends] of marks) {
        if (marks.size <= most && ends > at) break;
        marks.delete(other);
      }
      clients.set(clientId, marks);
    },
  };
}

/**
 * How long this process skips writing a mark it wrote itself, at most (and a quarter of a mark's
 * lifetime at most): a caller that comes back within it costs no store call, and its mark,
 * renewed after it, keeps at least three quarters of its lifetime while the caller keeps coming.
 */
const REMARK_AFTER_MS = 6 * 60 * 60 * 1000;
/** Marks this process remembers writing: past it the least recently used are written again when their caller comes back. */
const MAX_WRITTEN = 10_000;

/** How a mark's store call is made: through the store's guard, for its deadline and outage log. */
export interface MarkCalls {
  run<T>(work: () => Promise<T>): Promise<T>;
}

/** What client authentication and the login throttle ask: through the store's guard, and writing a mark again only once this process's copy grows old. */
export interface KnownCallers {
  /** Rejects as the guard's `run` does (client authentication's: a 503 StoreUnavailableError) when the store fails or is late. */
  isKnown(clientId: string, caller: string): Promise<boolean>;
  /** Never rejects: a mark the store fails is written at the caller's next success. */
  proved(clientId: string, caller: string): Promise<void>;
}

export function knownCallers(marks: KnownCallerMarks, guard: MarkCalls, options: { lifetimeMs: number; now: () => number }): KnownCallers {
  const written = new BoundedCache<string, true>({ max: MAX_WRITTEN, ttlMs: Math.min(REMARK_AFTER_MS, options.lifetimeMs / 4), now: options.now });
  const keyOf = (clientId: string, caller: string) => JSON.stringify([clientId, caller]);
  return {
    async isKnown(clientId, caller) {
      const known = await guard.run(() => marks.isKnown(clientId, caller));
      // A mark this process wrote and the store no longer holds (deleted, lost in a failover,
      // pushed out by others) is written again at the caller's next success, not hours later.
      if (!known) written.delete(keyOf(clientId, caller));
      return known;
    },
    async proved(clientId, caller) {
      const key = keyOf(clientId, caller);
      if (written.get(key)) return;
      try {
        await guard.run(() => marks.remember(clientId, caller));
        written.set(key, true);
      } catch {
        // The next success from this caller writes it.
      }
    },
  };
}
