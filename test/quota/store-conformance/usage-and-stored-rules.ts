/**
 * Quota store conformance. get_quota never changes what it reports, the usage listing and its
 * reset, and stored rules.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { QuotaRule } from '../../../src/quota/index.js';
import { at, expectAdmitted, expectRejected, type QuotaConformanceSuite } from './harness.js';

export function registerUsageAndStoredRuleTests(suite: QuotaConformanceSuite): void {
  const { client, harness } = suite;

  it('answers get_quota without ever changing used', async () => {
    const id = client('inspect');
    const path = '/openapi/v1/orders';
    const h = harness({ start: '2026-11-21T10:00:00Z', rules: [{ scope: 'global', apiPath: path, minute: 2 }] });
    for (let i = 0; i < 3; i++) {
      const fresh = await h.quota.inspect(id, path);
      if (fresh.outcome !== 'ok') throw fresh.error;
      expect(fresh.time).toBe('2026-11-21T10:00:00.000Z');
      expect(fresh.report.periods.map((p) => p.used)).toEqual([0, 0, 0]);
      expect(fresh.report.periods[0]).toEqual({ period: 'minute', limit: 2, used: 0, remaining: 2, unlimited: false, reset_at: '2026-11-21T10:01:00.000Z' });
    }
    expectAdmitted(await h.quota.consume(id, path));
    for (let i = 0; i < 3; i++) expect(await h.used(id, path)).toEqual({ minute: 1, day: 1, month: 1 });
    expectAdmitted(await h.quota.consume(id, path));
    expectRejected(await h.quota.consume(id, path));
    for (let i = 0; i < 3; i++) expect(await h.used(id, path)).toEqual({ minute: 2, day: 2, month: 2 });
    // inspecting did not use up anything: the minute still has exactly 2 calls, not fewer
    h.set('2026-11-21T10:01:00Z');
    expectAdmitted(await h.quota.consume(id, path));
    expectAdmitted(await h.quota.consume(id, path));
    expectRejected(await h.quota.consume(id, path));
  });

  it('lists the paths an application used in the current periods and forgets them on reset, one path or all', async () => {
    const h = harness({ start: '2026-11-21T10:00:00Z' });
    const id = client('usage');
    const other = client('usage-other');
    const paths = ['/openapi/v1/orders', '/openapi/v1/orders/:id', '/openapi/v1/get_fee'];
    for (const path of paths) expectAdmitted(await h.quota.consume(id, path));
    expectAdmitted(await h.quota.consume(other, paths[0]!));
    const usage = suite.store.usage!;
    const now = at('2026-11-21T10:00:30Z');
    expect((await usage.paths(id, now)).sort()).toEqual([...paths].sort());

    expect(await usage.reset(id, paths[1])).toBe(1);
    expect((await usage.paths(id, now)).sort()).toEqual([paths[2]!, paths[0]!].sort());
    expect(await h.used(id, paths[1]!)).toEqual({ minute: 0, day: 0, month: 0 });
    expect(await usage.reset(id)).toBe(2);
    expect(await usage.paths(id, now)).toEqual([]);
    expect(await usage.paths(other, now)).toEqual([paths[0]]);
    expect(await usage.reset(id)).toBe(0);
  });

  it('keeps stored rules by scope, client and path: saved, found, listed, replaced and deleted', async () => {
    const rules = suite.store.rules!;
    const id = client('rules');
    const path = `/openapi/v1/rules-${randomBytes(3).toString('hex')}`;
    const own: QuotaRule = { scope: 'client', clientId: id, apiPath: path, minute: 5 };
    const global: QuotaRule = { scope: 'global', apiPath: path, minute: 50, cost: 2 };
    expect(await rules.findRules(id, path)).toEqual({});
    await rules.saveRule(own);
    await rules.saveRule(global);
    expect(await rules.findRules(id, path)).toEqual({ client: own, global });
    expect(await rules.findRules('someone-else', path)).toEqual({ global });
    // A client id that looks like a key of another rule finds nothing of it.
    expect(await rules.findRules(`${id}","${path}`, path)).toEqual({ global });

    await rules.saveRule({ ...own, minute: 7 });
    expect((await rules.findRules(id, path)).client).toEqual({ ...own, minute: 7 });
    expect((await rules.listRules()).filter(({ key }) => key.apiPath === path)).toEqual(expect.arrayContaining([{ key: { scope: 'client', clientId: id, apiPath: path }, rule: { ...own, minute: 7 } }, { key: { scope: 'global', apiPath: path }, rule: global }]));

    expect(await rules.deleteRule({ scope: 'client', clientId: id, apiPath: path })).toBe(true);
    expect(await rules.deleteRule({ scope: 'client', clientId: id, apiPath: path })).toBe(false);
    expect(await rules.findRules(id, path)).toEqual({ global });
    expect(await rules.deleteRule({ scope: 'global', apiPath: path })).toBe(true);
    expect((await rules.listRules()).filter(({ key }) => key.apiPath === path)).toEqual([]);
  });
}
