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

/** Addresses kept at most; past it the longest-held goes first (it would take a flood of 429s from fresh addresses). */
const MAX_ADDRESSES = 10_000;

export function lockedAddresses(now: () => number): LockedAddresses {
  const until = new Map<string, number>();
  return {
    lock(address, seconds) {
      until.delete(address);
      if (until.size >= MAX_ADDRESSES) until.delete(until.keys().next().value as string);
      until.set(address, now() + seconds * 1000);
    },
    isLocked(address) {
      const end = until.get(address);
      if (end === undefined) return false;
      if (end > now()) return true;
      until.delete(address);
      return false;
    },
  };
}
