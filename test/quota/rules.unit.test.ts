/**
 * Rule resolution (docs/quota.md): a rule for this client and path (scope client), else a rule
 * for the path (scope global), else the defaults (scope system: 60/minute, 1000/day, month
 * unlimited, cost 1). Limit 0 = unlimited.
 */
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConfigurationError } from '../../src/core/errors.js';
import {
  SYSTEM_DEFAULTS,
  createStaticRuleSource,
  normalizeApiPath,
  resolveRule,
  type QuotaRule,
} from '../../src/quota/index.js';
import { quotaDefaultsSchema } from '../../src/quota/rules.js';

function configurationErrorOf(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a ConfigurationError');
}

describe('normalizeApiPath', () => {
  it.each([
    ['/openapi/v1/ping', '/openapi/v1/ping'],
    ['/openapi/v1/ping/', '/openapi/v1/ping'],
    ['/openapi/v1/ping///', '/openapi/v1/ping'],
    ['/openapi/v1/ping?x=1', '/openapi/v1/ping'],
    ['/openapi/v1/ping/?x=1&y=/a/', '/openapi/v1/ping'],
    ['/openapi/v1/ping#frag', '/openapi/v1/ping'],
    ['/openapi/v1/ping#frag?not-a-query', '/openapi/v1/ping'],
    ['/openapi/v1/Orders', '/openapi/v1/orders'], // case is folded, as the frameworks route
    ['/openapi//v1/ping', '/openapi//v1/ping'], // inner slashes are the host's business
    // RFC 3986 6.2.2.2: an encoded unreserved character is that character; other escapes stay.
    ['/openapi/%76%31/%70in%67', '/openapi/v1/ping'],
    ['/openapi/v1/%4Frders%2d%5F%7e%2E', '/openapi/v1/orders-_~.'],
    ['/openapi/v1/a%2Fb%20c%25%41', '/openapi/v1/a%2fb%20c%25a'],
    ['/openapi/v1/ping%2F', '/openapi/v1/ping%2f'],
    ['/', '/'],
    ['//', '/'],
    ['/?x', '/'],
    // RFC 3987 3.1, RFC 3986 2.1: what a URI path cannot hold is its UTF-8 percent-encoded, as clients send it.
    ['/openapi/v1/Ärger', '/openapi/v1/%c3%84rger'],
    ['/openapi/v1/%C3%84rger', '/openapi/v1/%c3%84rger'],
    ['/openapi/v1/ärger', '/openapi/v1/%c3%a4rger'], // another endpoint than Ärger, as Express routes them
    ['/openapi/v1/😀/ß', '/openapi/v1/%f0%9f%98%80/%c3%9f'],
    ['/openapi/v1/a b"{|}^`<>\\', '/openapi/v1/a%20b%22%7b%7c%7d%5e%60%3c%3e%5c'],
    ['/openapi/v1/50%/%zz/%4', '/openapi/v1/50%25/%25zz/%254'],
    ["/openapi/v1/a!$&'()*+,;=:@b", "/openapi/v1/a!$&'()*+,;=:@b"], // sub-delims, ':' and '@' belong in a path
    // decodeURI (Hono's router) decodes these marks, so their escapes reach the same route.
    ["/openapi/v1/a%21%27%28x%29%2A", "/openapi/v1/a!'(x)*"],
    ['/openapi/v1/a%24%26%2B%2C%3B%3D%3A%40', '/openapi/v1/a%24%26%2b%2c%3b%3d%3a%40'], // decodeURI keeps these
  ])('%s -> %s', (input, expected) => {
    expect(normalizeApiPath(input)).toBe(expected);
  });

  it.each([['openapi/v1/ping'], [''], ['?x=1'], ['http://host/openapi'], ['/a\nb'], [`/${'a'.repeat(1100)}`], [`/${'Ä'.repeat(200)}`], ['/a\uD800b']])('refuses %j with a 400', (input) => {
    expect(() => normalizeApiPath(input)).toThrow(BadRequestError);
  });
});

describe('rule resolution', () => {
  const path = '/openapi/v1/orders';
  const rules: QuotaRule[] = [
    { scope: 'global', apiPath: path, minute: 10, day: 100, cost: 2 },
    { scope: 'client', clientId: 'partner', apiPath: `${path}/`, minute: 30 },
    { scope: 'client', clientId: 'free', apiPath: path, minute: 0, day: 0, month: 0, cost: 0 },
    { scope: 'client', clientId: 'partner', apiPath: '/openapi/v1/only-client' },
  ];
  const source = createStaticRuleSource(rules);
  const resolve = (clientId: string, apiPath: string) => resolveRule(source.findRules(clientId, apiPath), apiPath, SYSTEM_DEFAULTS);

  it('prefers the client rule; its missing fields are the defaults, not the global rule', () => {
    expect(resolve('partner', path)).toEqual({ scope: 'client', apiPath: path, cost: 1, limits: { minute: 30, day: 1000, month: 0 } });
  });

  it('falls back to the global rule for other clients', () => {
    expect(resolve('someone', path)).toEqual({ scope: 'global', apiPath: path, cost: 2, limits: { minute: 10, day: 100, month: 0 } });
  });

  it('falls back to the system defaults: 60 / 1000 / unlimited month / cost 1', () => {
    expect(resolve('someone', '/openapi/v1/other')).toEqual({ scope: 'system', apiPath: '/openapi/v1/other', cost: 1, limits: { minute: 60, day: 1000, month: 0 } });
    expect(resolve('someone', '/openapi/v1/only-client').scope).toBe('system');
    expect(resolve('partner', '/openapi/v1/only-client').scope).toBe('client');
  });

  it('keeps 0 as unlimited (and a cost of 0 as free) instead of falling back to a default', () => {
    expect(resolve('free', path)).toEqual({ scope: 'client', apiPath: path, cost: 0, limits: { minute: 0, day: 0, month: 0 } });
  });

  it('uses configured defaults for the system scope and for missing fields', () => {
    const defaults = quotaDefaultsSchema.parse({ minute: 5, month: 5000 });
    expect(defaults).toEqual({ minute: 5, day: 1000, month: 5000, cost: 1 });
    expect(resolveRule({}, '/x', defaults)).toEqual({ scope: 'system', apiPath: '/x', cost: 1, limits: { minute: 5, day: 1000, month: 5000 } });
    expect(resolveRule(source.findRules('partner', path), path, defaults).limits).toEqual({ minute: 30, day: 1000, month: 5000 });
  });

  it('indexes rules under their normalised path', () => {
    expect(source.findRules('partner', path).client?.minute).toBe(30);
    expect(source.rules[1]?.apiPath).toBe(path);
  });
});

describe('rule and default validation', () => {
  it.each<[string, unknown]>([
    ['a client rule without clientId', { scope: 'client', apiPath: '/x' }],
    ['a global rule with a clientId', { scope: 'global', clientId: 'a', apiPath: '/x' }],
    ['an unknown scope', { scope: 'system', apiPath: '/x' }],
    ['a negative limit', { scope: 'global', apiPath: '/x', minute: -1 }],
    ['a fractional cost', { scope: 'global', apiPath: '/x', cost: 1.5 }],
    ['a string limit', { scope: 'global', apiPath: '/x', day: '10' }],
    ['a path without a leading slash', { scope: 'global', apiPath: 'x' }],
    ['an unknown field (typo)', { scope: 'global', apiPath: '/x', minutes: 5 }],
  ])('refuses %s with a TypeError', (_, rule) => {
    expect(() => createStaticRuleSource([rule as QuotaRule])).toThrow(TypeError);
  });

  it.each<[string, Partial<QuotaRule>, string, RegExp]>([
    ['a cost above 1000', { cost: 1001 }, 'cost', /must be at most 1000$/],
    ['the cost that overflowed PostgreSQL', { cost: Number.MAX_SAFE_INTEGER, minute: 0, day: 0, month: 0 }, 'cost', /must be at most 1000$/],
    ['a limit above 1e12', { month: 1e12 + 1 }, 'month', /must be at most 1000000000000$/],
    ['a ".." segment', { apiPath: '/openapi/v1/x/../dots' }, 'apiPath', /must not hold "\." or "\.\." segments/],
    ['a "." segment at the end', { apiPath: '/openapi/v1/x/./' }, 'apiPath', /"\." or "\.\." segments/],
    ['a ".." segment spelt %2E%2e', { apiPath: '/openapi/v1/x/%2E%2e/dots' }, 'apiPath', /"\." or "\.\." segments/],
  ])('refuses %s, naming the field', (_, fields, field, message) => {
    const error = configurationErrorOf(() => createStaticRuleSource([{ scope: 'global', apiPath: '/x', ...fields }]));
    expect(error.issues.map((issue) => issue.field)).toEqual([`quota.rules[0].${field}`]);
    expect(error.message).toMatch(message);
  });

  it('accepts the bounds themselves, and dots that are no segment of their own', () => {
    const rules: QuotaRule[] = [
      { scope: 'global', apiPath: '/openapi/v1/heavy', cost: 1000, minute: 1e12, day: 1e12, month: 1e12 },
      { scope: 'global', apiPath: '/openapi/v1/x/.../.y/z.' },
    ];
    expect(createStaticRuleSource(rules).rules.map((rule) => rule.apiPath)).toEqual(['/openapi/v1/heavy', '/openapi/v1/x/.../.y/z.']);
    expect(quotaDefaultsSchema.safeParse({ cost: 1000, month: 1e12 }).success).toBe(true);
    expect(quotaDefaultsSchema.safeParse({ cost: 1001 }).success).toBe(false);
    expect(quotaDefaultsSchema.safeParse({ day: 1e12 + 1 }).success).toBe(false);
  });

  it('refuses two rules for the same scope, client and path (after normalisation)', () => {
    expect(() => createStaticRuleSource([{ scope: 'global', apiPath: '/x' }, { scope: 'global', apiPath: '/x/' }])).toThrow(/second global rule/);
    expect(() =>
      createStaticRuleSource([
        { scope: 'client', clientId: 'a', apiPath: '/x' },
        { scope: 'client', clientId: 'a', apiPath: '/x?y' },
      ]),
    ).toThrow(/second rule for client a/);
  });
});
