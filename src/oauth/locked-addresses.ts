import { BoundedCache } from '../core/cache.js';

/**
 * The addresses this process answered 429 at the client-authentication limit, each until its
 * wait ends. A secret the process verified recently skips the limit (docs/performance.md), but
 * never from one of these: a locked-out guesser would otherwise see 429 for every wrong secret
 * and 200 for the right one, an oracle with no limit and no scrypt cost (RFC 6749 10.10).
 */
export interface LockedAddresses {
  lock(address: string, seconds: number): void;
  isLocked(address: string): boolean;
}

/**
 * Addresses kept at most; past it the least recently locked or checked goes first (it would take
 * a flood of 429s from fresh addresses).
 */
const MAX_ADDRESSES = 10_000;

export function lockedAddresses(now: () => number): LockedAddresses {
  const locked = new BoundedCache<string, true>({ max: MAX_ADDRESSES, now });
  return {
    lock: (address, seconds) => locked.set(address, true, seconds * 1000),
    isLocked: (address) => locked.get(address) === true,
  };
}
