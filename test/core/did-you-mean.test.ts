/**
 * Which known option a misspelt one is taken for: only a close one, found at the place in the
 * options where the unknown key sits (a union's branches and arrays included).
 */
import { describe, expect, it } from 'vitest';
import { closestKey } from '../../src/core/did-you-mean.js';
import { platformOptionsSchema } from '../../src/options.js';

describe('closestKey', () => {
  it.each<[string, (string | number)[], string, string | undefined]>([
    ['another case', ['oauth'], 'publicURL', 'publicUrl'],
    ['two letters swapped', ['oauth'], 'pubilcUrl', 'publicUrl'],
    ['a letter missing', ['courier'], 'timoutMs', 'timeoutMs'],
    ['the unit left off', ['quota'], 'storeTimeout', 'storeTimeoutMs'],
    ['inside an array of objects', ['oauth', 'clients', 0], 'redirectUri', 'redirectUris'],
    ['at the top level', [], 'qouta', 'quota'],
    ['nothing close', ['oauth'], 'colour', undefined],
    ['a short key far from any', [], 'x', undefined],
    ['a path the schema does not have', ['nowhere'], 'publicUrl', undefined],
  ])('%s: %j %s -> %s', (_, path, key, expected) => {
    expect(closestKey(platformOptionsSchema, path, key)).toBe(expected);
  });
});
