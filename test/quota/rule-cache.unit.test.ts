/**
 * The rule cache in front of a host's rule source (docs/quota.md): answers kept per client and
 * path for `ruleCache.ttlMs`, at most `ruleCache.maxEntries` pairs, concurrent misses sharing one
 * question, and a failing source following `onStoreError` with the last rule it answered.
 */
import { describe, expect, it } from 'vitest';
import { createQuotaService, guardVerdict, type MatchedRules, type QuotaServiceOptions, type RuleSource } from '../../src/quota/index.js';
import { silentLogger } from '../../src/core/logger.js';

type Mode = 'ok' | 'throw' | 'reject' | 'hang';
function countingSource(minute = 3): RuleSource & { calls: string[]; mode: Mode } {
  const source = {
    calls: [] as string[],
    mode: 'ok' as Mode,
    findRules(clientId: string, apiPath: string): Promise<MatchedRules> {
      source.calls.push(`${clientId} ${apiPath}`);
      if (source.mode === 'throw') throw new Error('rule source down (thrown)');
      if (source.mode === 'reject') return Promise.reject(new Error('rule source down'));
      if (source.mode === 'hang') return new Promise<MatchedRules>(() => {});
      return Promise.resolve({ global: { scope: 'global', apiPath, minute } });
    },
  };
  return source;
}

function service(options: QuotaServiceOptions) {
  let now = Date.parse('2026-11-21T10:00:07Z');
  const quota = createQuotaService({ logger: silentLogger, now: () => now, storeTimeoutMs: 50, ...options });
  return { quota, advance: (ms: number) => void (now += ms) };
}

describe('the rule cache', () => {
  it('asks the source once per client and path within ttlMs (default 5 s), and again once it has passed', async () => {
    const rules = countingSource();
    const { quota, advance } = service({ rules });
    await quota.consume('a', '/x');
    await quota.consume('a', '/x');
    await quota.consume('b', '/x');
    await quota.consume('a', '/y');
    expect(rules.calls).toEqual(['a /x', 'b /x', 'a /y']);
    advance(4999);
    await quota.consume('a', '/x');
    expect(rules.calls).toHaveLength(3);
    advance(1);
    await quota.consume('a', '/x');
    expect(rules.calls).toEqual(['a /x', 'b /x', 'a /y', 'a /x']);
  });

  it('shares one question among concurrent misses for the same pair', async () => {
    const rules = countingSource();
    const { quota } = service({ rules });
    const decisions = await Promise.all(Array.from({ length: 5 }, () => quota.consume('a', '/x')));
    expect(decisions.map((d) => d.outcome)).toEqual(['admitted', 'admitted', 'admitted', 'rejected', 'rejected']);
    expect(rules.calls).toEqual(['a /x']);
  });

  it('asks every time with ttlMs 0, and holds at most maxEntries pairs', async () => {
    const uncached = countingSource();
    const zero = service({ rules: uncached, ruleCache: { ttlMs: 0 } });
    for (let i = 0; i < 3; i++) await zero.quota.consume('a', '/x');
    expect(uncached.calls).toHaveLength(3);

    const small = countingSource();
    const one = service({ rules: small, ruleCache: { maxEntries: 1 } });
    for (let i = 0; i < 2; i++) {
      await one.quota.consume('a', '/x');
      await one.quota.consume('b', '/x');
    }
    expect(small.calls).toEqual(['a /x', 'b /x', 'a /x', 'b /x']);
  });

  it('when full, lets the least recently used client go first, not the active one', async () => {
    const rules = countingSource(1_000);
    const { quota } = service({ rules, ruleCache: { maxEntries: 2 } });
    await quota.consume('active', '/x');
    await quota.consume('idle', '/x');
    await quota.consume('active', '/x');
    await quota.consume('new', '/x');
    await quota.consume('active', '/x');
    expect(rules.calls).toEqual(['active /x', 'idle /x', 'new /x']);
    await quota.consume('idle', '/x');
    expect(rules.calls).toEqual(['active /x', 'idle /x', 'new /x', 'idle /x']);
  });

  it('rejects a bad ruleCache at start, naming the field', () => {
    expect(() => createQuotaService({ ruleCache: { ttlMs: -1 } })).toThrow(/quota\.ruleCache\.ttlMs/);
    expect(() => createQuotaService({ ruleCache: { maxEntries: 0 } })).toThrow(/quota\.ruleCache\.maxEntries/);
  });
});

describe('a failing rule source', () => {
  it.each<Mode>(['throw', 'reject', 'hang'])("under 'open' (%s): admits under the insurance limit with the last rule it answered", async (mode) => {
    const rules = countingSource(2);
    const { quota, advance } = service({ rules, defaults: { minute: 100 } });
    expect((await quota.consume('a', '/x')).outcome).toBe('admitted');
    rules.mode = mode;
    advance(5000);
    const during = [await quota.consume('a', '/x'), await quota.consume('a', '/x')];
    expect(during.map((d) => [d.outcome, d.outcome !== 'store_unavailable' && d.source, d.outcome !== 'store_unavailable' && d.rule.limits.minute])).toEqual([
      ['admitted', 'insurance', 2],
      ['rejected', 'insurance', 2],
    ]);
    expect(guardVerdict(during[1]!)).toMatchObject({ pass: false, response: { status: 429 } });
  });

  it.each<Mode>(['throw', 'reject', 'hang'])("under 'closed' (%s): answers 503", async (mode) => {
    const rules = countingSource();
    rules.mode = mode;
    const { quota } = service({ rules, onStoreError: 'closed' });
    const d = await quota.consume('a', '/x');
    expect(d.outcome).toBe('store_unavailable');
    expect(guardVerdict(d)).toMatchObject({ pass: false, response: { status: 503 } });
  });
});
