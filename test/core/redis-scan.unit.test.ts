/**
 * Listing keys for the admin API: every page of SCAN on every master, and a client that cannot
 * SCAN named as the store option it came from.
 */
import { describe, expect, it } from 'vitest';
import { globEscape, scanKeyPages, scanKeys } from '../../src/core/redis-scan.js';

/** A node whose SCAN answers `pages` one after the other, cursor by cursor. */
function node(pages: string[][]) {
  return {
    scan: async (cursor: string) => {
      const at = Number(cursor);
      return [at + 1 < pages.length ? String(at + 1) : '0', pages[at]!] as [string, string[]];
    },
  };
}

describe('scanKeys', () => {
  it('collects every page of every master of a Cluster', async () => {
    const cluster = { nodes: () => [node([['a'], ['b']]), node([['c']])] };
    expect(await scanKeys(cluster, '*')).toEqual(['a', 'b', 'c']);
  });

  it('hands each page to the visitor before it asks for the next, and tells the call of every round trip', async () => {
    const asked: string[] = [];
    const paged = node([['a', 'b'], [], ['c']]);
    const scanning = { scan: (cursor: string) => (asked.push(`scan ${cursor}`), paged.scan(cursor)) };
    let answered = 0;
    await scanKeyPages(scanning, '*', { answered: () => answered++ }, async (keys) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      asked.push(`visited ${keys.join(',')}`);
    });
    // An empty page is not visited.
    expect(asked).toEqual(['scan 0', 'visited a,b', 'scan 1', 'scan 2', 'visited c']);
    expect(answered).toBe(3);
  });

  it('refuses a client without SCAN with an invalid_option naming client', async () => {
    await expect(scanKeys({ get: async () => null }, '*')).rejects.toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_option', field: 'client', message: expect.stringContaining('SCAN') }),
    );
  });

  it('escapes the glob characters of a literal part', () => {
    expect(globEscape('a*b?[c]\\')).toBe('a\\*b\\?\\[c\\]\\\\');
  });
});
