/**
 * The platform's bounded caches: least recently used out first, lifetimes on the injected clock
 * (a fake clock here: nothing waits on real time).
 */
import { describe, expect, it } from 'vitest';
import { BoundedCache, PairCache } from '../../src/core/cache.js';
import { ConfigurationError } from '../../src/core/errors.js';

function fakeClock(start = 0) {
  let at = start;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

describe('BoundedCache', () => {
  it('past max, lets the least recently used entry go, not the one in use', () => {
    const cache = new BoundedCache<string, number>({ max: 3 });
    cache.set('active', 1);
    cache.set('idle-1', 2);
    cache.set('idle-2', 3);
    expect(cache.get('active')).toBe(1);
    cache.set('new', 4);
    expect(cache.get('idle-1')).toBeUndefined();
    expect(cache.get('active')).toBe(1);
    expect(cache.get('idle-2')).toBe(3);
    expect(cache.get('new')).toBe(4);
    expect(cache.size).toBe(3);
  });

  it('keeps an active entry through any number of others passing through', () => {
    const cache = new BoundedCache<string, string>({ max: 100 });
    cache.set('active', 'kept');
    for (let i = 0; i < 1_001; i++) {
      cache.set(`passing-${i}`, 'x');
      if (i % 50 === 0) expect(cache.get('active')).toBe('kept');
    }
    expect(cache.get('active')).toBe('kept');
    expect(cache.size).toBe(100);
  });

  it('serves an entry for ttlMs on the injected clock, from a clock reading of 0 too', () => {
    const clock = fakeClock(0);
    const cache = new BoundedCache<string, string>({ max: 10, ttlMs: 1000, now: clock.now });
    cache.set('k', 'v');
    clock.advance(999);
    expect(cache.get('k')).toBe('v');
    clock.advance(1);
    expect(cache.get('k')).toBeUndefined();
  });

  it('takes a lifetime per entry, and keeps entries without one until they are pushed out', () => {
    const clock = fakeClock(Date.UTC(2031, 0, 1));
    const cache = new BoundedCache<string, boolean>({ max: 10, now: clock.now });
    cache.set('short', true, 2000);
    cache.set('long', true, 60_000);
    cache.set('forever', true);
    clock.advance(2000);
    expect([cache.get('short'), cache.get('long'), cache.get('forever')]).toEqual([undefined, true, true]);
    clock.advance(365 * 86_400_000);
    expect([cache.get('long'), cache.get('forever')]).toEqual([undefined, true]);
  });

  it('a set starts the lifetime anew; delete and clear forget', () => {
    const clock = fakeClock(1);
    const cache = new BoundedCache<string, number>({ max: 10, ttlMs: 100, now: clock.now });
    cache.set('k', 1);
    clock.advance(90);
    cache.set('k', 2);
    clock.advance(90);
    expect(cache.get('k')).toBe(2);
    cache.delete('k');
    expect(cache.get('k')).toBeUndefined();
    cache.set('a', 1);
    cache.clear();
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('refuses a bound that is not a positive integer, with a coded error naming the field', () => {
    expect(() => new BoundedCache({ max: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option', message: expect.stringMatching(/max.*positive integer/) }));
    expect(() => new PairCache({ max: 1.5 })).toThrow(ConfigurationError);
  });
});

describe('PairCache', () => {
  it('holds at most max pairs; the least recently used client goes with its paths, the active one stays', () => {
    const cache = new PairCache<string>({ max: 4 });
    cache.set('active', '/a', 'A');
    cache.set('active', '/b', 'B');
    cache.set('idle', '/a', 'I');
    cache.set('other', '/a', 'O');
    expect(cache.get('active', '/a')).toBe('A');
    cache.set('new', '/a', 'N');
    expect(cache.get('idle', '/a')).toBeUndefined();
    expect([cache.get('active', '/a'), cache.get('active', '/b'), cache.get('other', '/a'), cache.get('new', '/a')]).toEqual(['A', 'B', 'O', 'N']);
    cache.set('active', '/c', 'C');
    expect(cache.get('other', '/a')).toBeUndefined();
    expect([cache.get('active', '/c'), cache.get('new', '/a')]).toEqual(['C', 'N']);
  });

  it('replacing a pair does not count it twice', () => {
    const cache = new PairCache<number>({ max: 2 });
    cache.set('a', '/x', 1);
    cache.set('b', '/x', 1);
    for (let i = 0; i < 5; i++) cache.set('a', '/x', i);
    expect([cache.get('a', '/x'), cache.get('b', '/x')]).toEqual([4, 1]);
  });

  it('serves a pair for ttlMs; stale() still answers it until it is pushed out or cleared', () => {
    const clock = fakeClock(0);
    const cache = new PairCache<string>({ max: 2, ttlMs: 5000, now: clock.now });
    cache.set('a', '/x', 'rule');
    clock.advance(5000);
    expect(cache.get('a', '/x')).toBeUndefined();
    expect(cache.stale('a', '/x')).toBe('rule');
    cache.set('b', '/x', 'b');
    cache.set('c', '/x', 'c');
    expect(cache.stale('a', '/x')).toBeUndefined();
    cache.clear();
    expect(cache.stale('b', '/x')).toBeUndefined();
  });
});
