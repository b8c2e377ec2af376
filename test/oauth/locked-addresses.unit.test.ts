/**
 * The addresses answered 429 at the client-authentication limit, which never skip it with a
 * remembered secret (RFC 6749 10.10): each until its wait ends on the platform's clock, at most
 * 10,000, the least recently locked or checked going first.
 */
import { describe, expect, it } from 'vitest';
import { lockedAddresses } from '../../src/oauth/locked-addresses.js';

function clock() {
  let at = Date.UTC(2031, 4, 12, 8, 30, 0);
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

describe('lockedAddresses', () => {
  it('holds an address until its wait ends, each with its own wait', () => {
    const time = clock();
    const locked = lockedAddresses(time.now);
    locked.lock('198.51.100.1', 60);
    locked.lock('198.51.100.2', 1);
    expect(locked.isLocked('198.51.100.3')).toBe(false);
    time.advance(999);
    expect([locked.isLocked('198.51.100.1'), locked.isLocked('198.51.100.2')]).toEqual([true, true]);
    time.advance(1);
    expect([locked.isLocked('198.51.100.1'), locked.isLocked('198.51.100.2')]).toEqual([true, false]);
    time.advance(59_000);
    expect(locked.isLocked('198.51.100.1')).toBe(false);
  });

  it('past 10,000 addresses, an address still trying stays locked; an idle one goes first', () => {
    const locked = lockedAddresses(clock().now);
    locked.lock('guesser', 900);
    locked.lock('idle', 900);
    for (let i = 0; i < 10_500; i++) {
      locked.lock(`10.0.${i >> 8}.${i & 255}`, 900);
      if (i % 1000 === 0) expect(locked.isLocked('guesser')).toBe(true);
    }
    expect(locked.isLocked('guesser')).toBe(true);
    expect(locked.isLocked('idle')).toBe(false);
  });
});
