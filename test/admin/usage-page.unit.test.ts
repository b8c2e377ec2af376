/**
 * How a page of `GET {admin}/usage` reads its endpoints (docs/operator.md#usage): a few at a time,
 * and no longer than its time budget, so a page on a slow store answers the endpoints it has read
 * and its cursor goes on from there.
 */
import { describe, expect, it } from 'vitest';
import { readWithin } from '../../src/admin/usage.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('readWithin', () => {
  it('reads every item, at most `atOnce` at a time, answers in the items order', async () => {
    let open = 0;
    let most = 0;
    const items = Array.from({ length: 20 }, (_, i) => i);
    const answers = await readWithin(items, 3, 10_000, async (i) => {
      most = Math.max(most, ++open);
      await sleep(20 - i);
      open--;
      return i * 2;
    });
    expect(answers).toEqual(items.map((i) => i * 2));
    expect(most).toBe(3);
  });

  it('stops starting reads once its budget has passed and answers the first items read', async () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const started: number[] = [];
    const answers = await readWithin(items, 2, 150, async (i) => {
      started.push(i);
      await sleep(50);
      return i;
    });
    // About three rounds of two in 150 ms: far from all 100, and exactly the first ones, in order.
    expect(answers.length).toBeGreaterThanOrEqual(2);
    expect(answers.length).toBeLessThan(20);
    expect(answers).toEqual(items.slice(0, answers.length));
    expect(started).toHaveLength(answers.length);
  });

  it('reads at least one item whatever the budget, and rejects with the first failure', async () => {
    expect(await readWithin(['a', 'b'], 1, 0, async (item) => item)).toEqual(['a']);
    const reads: number[] = [];
    await expect(
      readWithin([1, 2, 3, 4, 5, 6], 2, 10_000, async (i) => {
        reads.push(i);
        if (i === 2) throw new Error('store down');
        await sleep(5);
        return i;
      }),
    ).rejects.toThrow('store down');
    await sleep(30);
    // Once one read failed, no new one starts.
    expect(reads.length).toBeLessThan(6);
  });
});
