/**
 * Configured rules first, stored rules (the admin API's, docs/operator.md#quota-rules) behind
 * them: for each scope, a configured rule wins over a stored one with the same key, which the
 * admin API refuses to write anyway.
 */
import { isThenable } from '../core/maybe-promise.js';
import type { MatchedRules, RuleSource } from './rules.js';
import type { QuotaRuleStore } from './store/types.js';

export function withStoredRules(configured: RuleSource, stored: QuotaRuleStore): RuleSource {
  const merge = (first: MatchedRules, second: MatchedRules): MatchedRules => {
    const client = first.client ?? second.client;
    const global = first.global ?? second.global;
    return { ...(client ? { client } : {}), ...(global ? { global } : {}) };
  };
  return {
    findRules(clientId, apiPath) {
      const first = configured.findRules(clientId, apiPath);
      const second = stored.findRules(clientId, apiPath);
      if (!isThenable(first) && !isThenable(second)) return merge(first, second);
      return Promise.all([first, second]).then(([a, b]) => merge(a, b));
    },
  };
}
