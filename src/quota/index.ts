/**
 * The quota, framework-neutral: calendar periods, rules, stores, the service the guard and
 * get_quota call, and the HTTP renderings of its decisions.
 */
export { QuotaCalendar, QUOTA_PERIODS, checkTimeZone, type PeriodWindow, type QuotaPeriod, type ZonedDateTime } from './periods.js';
export {
  SYSTEM_DEFAULTS,
  MAX_API_PATH_LENGTH,
  checkDefaults,
  checkRule,
  createStaticRuleSource,
  normalizeApiPath,
  resolveRule,
  type MatchedRules,
  type QuotaDefaults,
  type QuotaRule,
  type QuotaScope,
  type ResolvedQuotaRule,
  type RuleSource,
  type StaticRuleSource,
} from './rules.js';
export * from './store/index.js';
export { QuotaStoreError, QuotaStoreTimeoutError, type QuotaDependency } from './errors.js';
export {
  createQuotaService,
  type OnStoreError,
  type QuotaAdmitted,
  type QuotaDecision,
  type QuotaIdentity,
  type QuotaInspection,
  type QuotaPeriodState,
  type QuotaRejected,
  type QuotaReport,
  type QuotaService,
  type QuotaServiceOptions,
  type QuotaStoreUnavailable,
} from './service.js';
export {
  guardVerdict,
  quotaExceededMessage,
  quotaExceededResponse,
  quotaHeaders,
  quotaReportResponse,
  rateLimitHeader,
  rateLimitPolicyHeader,
  storeUnavailableResponse,
  type QuotaExceededData,
} from './responses.js';
