/**
 * The quota, framework-neutral: calendar periods, rules, stores, the service the guard and
 * get_quota call, and the HTTP renderings of its decisions.
 */
export { QuotaCalendar, QUOTA_PERIODS, checkTimeZone, type PeriodWindow, type QuotaPeriod } from './periods.js';
export { MAX_API_PATH_LENGTH, normalizeApiPath } from './api-path.js';
export {
  SYSTEM_DEFAULTS,
  checkRule,
  resolveRule,
  type MatchedRules,
  type QuotaDefaults,
  type QuotaRule,
  type QuotaScope,
  type ResolvedQuotaRule,
  type RuleSource,
} from './rules.js';
export { createStaticRuleSource } from './static-rules.js';
export * from './store/index.js';
export { QuotaStoreError, QuotaStoreTimeoutError, QuotaExceededError, QuotaStoreUnavailableError } from './errors.js';
export {
  quotaOptionsSchema,
  resolveQuotaConfig,
  type OnStoreError,
  type QuotaIdentity,
  type QuotaOptions,
  type QuotaServiceOptions,
  type TokenVerifier,
} from './options.js';
export type { QuotaAdmitted, QuotaDecision, QuotaPeriodState, QuotaRejected } from './decision.js';
export { quotaReportSchema, type QuotaInspection, type QuotaReport } from './report.js';
export { buildQuotaService, createQuotaService, type QuotaService } from './service.js';
export {
  guardVerdict,
  quotaExceededResponse,
  quotaHeaders,
  quotaReportResponse,
  rateLimitHeader,
  rateLimitPolicyHeader,
} from './responses.js';
