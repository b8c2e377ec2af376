/**
 * Listing keys for the admin API: every page of SCAN on every master, and a client that cannot
 * SCAN named as the store option it came from.
 */
import { describe, expect, it } from 'vitest';
import { globEscape, scanKeys } from '../../src/core/redis-scan.js';

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

  it('refuses a client without SCAN with an invalid_option naming client', async () => {
    await expect(scanKeys({ get: async () => null }, '*')).rejects.toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_option', field: 'client', message: expect.stringContaining('SCAN') }),
    );
  });

  it('escapes the glob characters of a literal part', () => {
    expect(globEscape('a*b?[c]\\')).toBe('a\\*b\\?\\[c\\]\\\\');
  });
});
