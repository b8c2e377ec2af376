/**
 * Which rule applies to a call, as fast as the guard needs it: normalised paths and the rules a
 * static list resolves to are remembered (bounded), so the hot path allocates nothing per call.
 * A host's rule source is asked every time, under the store deadline, and what it answers is
 * checked like a configured rule.
 */
import { isThenable } from '../core/maybe-promise.js';
import { PairCache } from '../core/pair-cache.js';
import { normalizeApiPath } from './api-path.js';
import { withDeadline } from './deadline.js';
import { QuotaStoreError } from './errors.js';
import type { QuotaConfig } from './options.js';
import { checkRule, resolveRule, type MatchedRules, type ResolvedQuotaRule } from './rules.js';

const MAX_REMEMBERED = 10_000;

export interface RuleLookup {
  /** `normalizeApiPath`, remembered: the guard sees the same few paths over and over. @throws BadRequestError */
  normalizedPath(rawPath: string): string;
  /**
   * The rule in force (client > global > system): at once for a configured list, a promise for
   * a source that answers with one. A failing source or a bad rule from it is a QuotaStoreError
   * of the `rules` dependency.
   */
  find(clientId: string, apiPath: string): ResolvedQuotaRule | Promise<ResolvedQuotaRule>;
}

export function createRuleLookup(config: Pick<QuotaConfig, 'rules' | 'defaults' | 'storeTimeoutMs'>): RuleLookup {
  const { defaults, storeTimeoutMs } = config;
  const { kind, source } = config.rules;
  const normalized = new Map<string, string>();
  const resolved = new PairCache<ResolvedQuotaRule>(MAX_REMEMBERED);

  const checked = (matched: MatchedRules | undefined, apiPath: string): ResolvedQuotaRule => {
    const found = matched ?? {};
    try {
      return resolveRule(
        {
          ...(found.client ? { client: checkRule(found.client, `rule source (client rule for ${apiPath})`) } : {}),
          ...(found.global ? { global: checkRule(found.global, `rule source (global rule for ${apiPath})`) } : {}),
        },
        apiPath,
        defaults,
      );
    } catch (error) {
      throw new QuotaStoreError('rules', error);
    }
  };

  return {
    normalizedPath(rawPath) {
      let apiPath = normalized.get(rawPath);
      if (apiPath === undefined) {
        apiPath = normalizeApiPath(rawPath);
        if (normalized.size >= MAX_REMEMBERED) normalized.clear();
        normalized.set(rawPath, apiPath);
      }
      return apiPath;
    },

    find(clientId, apiPath) {
      if (kind === 'static') {
        let rule = resolved.get(clientId, apiPath);
        if (!rule) {
          rule = resolveRule(source.findRules(clientId, apiPath) as MatchedRules, apiPath, defaults);
          resolved.set(clientId, apiPath, rule);
        }
        return rule;
      }
      const found = source.findRules(clientId, apiPath);
      if (isThenable(found)) return withDeadline('rules', storeTimeoutMs, () => found).then((matched) => checked(matched, apiPath));
      return checked(found, apiPath);
    },
  };
}
