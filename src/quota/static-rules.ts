import { configurationError } from '../core/errors.js';
import { checkRule, type MatchedRules, type QuotaRule, type RuleSource } from './rules.js';

interface PathRules {
  global?: QuotaRule;
  byClient: Map<string, QuotaRule>;
}

/** A rule source over a fixed list, indexed by path then client: one or two Map lookups per call. */
export interface StaticRuleSource extends RuleSource {
  readonly rules: readonly QuotaRule[];
  findRules(clientId: string, apiPath: string): MatchedRules;
}

/**
 * The source over rules already checked (paths normalised). Two rules for the same scope, client
 * and path are a mistake: which one applies would depend on their order.
 * @throws ConfigurationError naming the second rule
 */
export function indexRules(rules: readonly QuotaRule[]): StaticRuleSource {
  const index = new Map<string, PathRules>();
  rules.forEach((rule, i) => {
    let entry = index.get(rule.apiPath);
    if (!entry) index.set(rule.apiPath, (entry = { byClient: new Map() }));
    if (rule.scope === 'global') {
      if (entry.global) throw configurationError('invalid_option', `quota.rules[${i}]`, `a second global rule for ${rule.apiPath}`);
      entry.global = rule;
    } else {
      const clientId = rule.clientId as string;
      if (entry.byClient.has(clientId)) throw configurationError('invalid_option', `quota.rules[${i}]`, `a second rule for client ${clientId} on ${rule.apiPath}`);
      entry.byClient.set(clientId, rule);
    }
  });
  const empty: MatchedRules = Object.freeze({});
  return {
    rules,
    findRules(clientId, apiPath) {
      const entry = index.get(apiPath);
      if (!entry) return empty;
      const client = entry.byClient.get(clientId);
      if (client) return { client, global: entry.global };
      return entry.global ? { global: entry.global } : empty;
    },
  };
}

/**
 * @example
 * import { createStaticRuleSource } from 'courier-platform';
 *
 * const rules = createStaticRuleSource([
 *   { scope: 'global', apiPath: '/openapi/v1/orders', minute: 10, cost: 2 },
 *   { scope: 'client', clientId: 'partner-1', apiPath: '/openapi/v1/orders', minute: 100 },
 * ]);
 * @throws ConfigurationError for an invalid rule or two rules for the same scope, client and path.
 */
export function createStaticRuleSource(rules: readonly QuotaRule[] = []): StaticRuleSource {
  if (!Array.isArray(rules)) throw configurationError('invalid_option', 'quota.rules', 'must be an array of rules');
  return indexRules(rules.map((rule, i) => checkRule(rule, `quota.rules[${i}]`)));
}
