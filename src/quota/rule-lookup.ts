/**
 * Which rule applies to a call, as fast as the guard needs it: normalised paths and the rules a
 * static list resolves to are remembered (bounded), so the hot path allocates nothing per call.
 * What a host's rule source answers is checked like a configured rule and kept per client and
 * path for `quota.ruleCache.ttlMs`, so the source is not asked on every guarded call; calls that
 * miss the same pair at once share one question, asked through the store guard (its deadline and
 * outage log: a failing source is a store outage like any other). An invalid rule in an answer
 * (stored under wider bounds than these, or written around the admin API) is not an outage: the
 * source answered. Its calls are answered as when the source fails
 * (docs/quota.md#rules-from-your-database), the refusal is kept like an answer, and the log names
 * the rule once an hour. A source that answers with an error about its data (a StoreDataError:
 * the Redis store's rules key of another type) is no outage either: its calls are answered the
 * same way, the refusal is kept like an answer, and the log names the error once an hour
 * (docs/quota.md#damaged-data).
 */
import { isThenable } from '../core/maybe-promise.js';
import { BoundedCache, PairCache } from '../core/cache.js';
import { normalizeApiPath } from './api-path.js';
import type { StoreGuard } from '../core/store-guard.js';
import { isRecordDataError, StoreDataError } from '../core/store-errors.js';
import { damagedRuleSource, damageReport } from './damaged.js';
import { asDependencyError, QuotaStoreError, type QuotaFailure } from './errors.js';
import type { QuotaConfig } from './options.js';
import { checkAnswer, checkFiledRule, refusalOf, resolveRule, type MatchedRules, type ResolvedQuotaRule, type RuleSource } from './rules.js';

/** Raw paths, and client and path pairs of a static list, remembered at most. */
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
  /** The rule the source last answered for the pair, however old: what a failing source falls back to. */
  lastKnown(clientId: string, apiPath: string): ResolvedQuotaRule | undefined;
  /** Rules changed in this process (the admin API): forget every rule found so far. */
  forget(): void;
}

/**
 * What a rule source threw, for the guard: an error about the source's data stays one (a
 * StoreDataError, which starts no outage), anything else is the `rules` dependency's failure.
 */
function sourceError(error: unknown): unknown {
  if (error instanceof StoreDataError) return error;
  return isRecordDataError(error) ? new StoreDataError('quota rule source', error) : asDependencyError('rules', error);
}

export function createRuleLookup(config: Pick<QuotaConfig, 'rules' | 'defaults' | 'ruleCache' | 'now' | 'logger' | 'onStoreError' | 'insurance'>, guard: StoreGuard): RuleLookup {
  const { defaults, now, logger } = config;
  const { kind, source } = config.rules;
  const { ttlMs, maxEntries } = config.ruleCache;
  const normalized = new BoundedCache<string, string>({ max: MAX_REMEMBERED });
  let lastPath: { raw: string; normalized: string } | undefined;
  const resolved = new PairCache<ResolvedQuotaRule>({ max: MAX_REMEMBERED });
  // Kept past ttlMs until pushed out: the rule a failing source falls back to (lastKnown).
  const answered = new PairCache<ResolvedQuotaRule>({ max: maxEntries, ttlMs, now });
  /** Questions to the source under way, by pair; bounded by the calls in flight. */
  const asking = new Map<string, Promise<ResolvedQuotaRule>>();
  /** Pairs whose answer held an invalid rule, for as long as an answer is kept. */
  const refused = new PairCache<QuotaStoreError>({ max: maxEntries, ttlMs, now });
  /** Invalid rules are logged once an hour, by what is wrong with them (damaged.ts). */
  const report = damageReport(now, logger, 'invalid rules');
  const damaged = damagedRuleSource({ logger, now, onStoreError: config.onStoreError, insurance: config.insurance });
  /** A failure of the source for the pair, as the service gets it; a data error is kept and logged like an invalid rule. */
  const failure = (error: unknown, clientId: string, apiPath: string): QuotaFailure => {
    if (!(error instanceof StoreDataError)) return asDependencyError('rules', error);
    const unreadable = new QuotaStoreError('rules', error);
    refused.set(clientId, apiPath, unreadable);
    damaged(clientId, apiPath, error);
    return unreadable;
  };

  const checked = (matched: MatchedRules | undefined, clientId: string, apiPath: string): ResolvedQuotaRule => {
    try {
      const found = checkAnswer(matched, `rule source (answer for ${JSON.stringify(clientId)} and ${apiPath})`);
      return resolveRule(
        {
          ...(found.client !== undefined ? { client: checkFiledRule(found.client, { scope: 'client', clientId, apiPath }, `rule source (client rule of ${JSON.stringify(clientId)} for ${apiPath})`) } : {}),
          ...(found.global !== undefined ? { global: checkFiledRule(found.global, { scope: 'global', apiPath }, `rule source (global rule for ${apiPath})`) } : {}),
        },
        apiPath,
        defaults,
      );
    } catch (error) {
      const invalid = new QuotaStoreError('rules', error);
      refused.set(clientId, apiPath, invalid);
      const reason = refusalOf(error);
      report(reason, () =>
        logger.error({ clientId, apiPath, err: invalid }, `quota: invalid rule, ${reason}; its calls are answered as when the rule source fails (onStoreError) until it is saved again`),
      );
      throw invalid;
    }
  };

  return {
    normalizedPath(rawPath) {
      // A route's calls mostly repeat the path before: comparing it spares the cache's lookup.
      if (rawPath === lastPath?.raw) return lastPath.normalized;
      let apiPath = normalized.get(rawPath);
      if (apiPath === undefined) {
        apiPath = normalizeApiPath(rawPath);
        normalized.set(rawPath, apiPath);
      }
      lastPath = { raw: rawPath, normalized: apiPath };
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
      const cached = answered.get(clientId, apiPath);
      if (cached) return cached;
      const invalid = refused.get(clientId, apiPath);
      if (invalid) throw invalid;
      const key = `${encodeURIComponent(clientId)} ${apiPath}`;
      const pending = asking.get(key);
      if (pending) return pending;
      const keep = (matched: MatchedRules | undefined): ResolvedQuotaRule => {
        const rule = checked(matched, clientId, apiPath);
        answered.set(clientId, apiPath, rule);
        return rule;
      };
      let found: ReturnType<RuleSource['findRules']>;
      try {
        found = source.findRules(clientId, apiPath);
      } catch (error) {
        throw failure(guard.failedNow(sourceError(error)), clientId, apiPath);
      }
      if (!isThenable(found)) return keep(found);
      const answer = found;
      // Already asked: the question enters no lane. The guard judges the source's answer; the rules in it are checked after.
      const question = guard
        .ask(
          () =>
            answer.catch((error: unknown) => {
              throw sourceError(error);
            }),
          { queued: true },
        )
        .then(keep, (error: unknown) => {
          throw failure(error, clientId, apiPath);
        });
      asking.set(key, question);
      const done = () => asking.delete(key);
      question.then(done, done);
      return question;
    },

    lastKnown(clientId, apiPath) {
      return answered.stale(clientId, apiPath);
    },

    forget() {
      resolved.clear();
      answered.clear();
      refused.clear();
    },
  };
}
