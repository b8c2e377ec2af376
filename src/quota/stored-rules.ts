/**
 * Configured rules first, stored rules (the admin API's, docs/operator.md#quota-rules) behind
 * them: for each scope, a configured rule wins over a stored one with the same key, which the
 * admin API refuses to write anyway.
 */
import { isThenable } from '../core/maybe-promise.js';
import { isObjectLiteral } from '../core/plain-object.js';
import type { MatchedRules, RuleSource } from './rules.js';
import type { QuotaRuleStore } from './store/types.js';

export function withStoredRules(configured: RuleSource, stored: QuotaRuleStore): RuleSource {
  // A rule present in either is passed on, whatever it holds: the rule check refuses what is not
  // one (rule-lookup.ts), so a stored `null` is an invalid rule, not the absence of one.
  const merge = (answer: MatchedRules | null | undefined, second: MatchedRules): MatchedRules => {
    const first: MatchedRules = answer ?? {};
    // Not an answer at all (a host's source answered an array, a string, a Map): passed on for the check to refuse.
    if (!isObjectLiteral(first as unknown)) return first;
    const client = first.client !== undefined ? first.client : second.client;
    const global = first.global !== undefined ? first.global : second.global;
    // Any other key of the answer stays, for the check to refuse (a misspelt `Global`).
    return { ...first, ...(client !== undefined ? { client } : {}), ...(global !== undefined ? { global } : {}) };
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
