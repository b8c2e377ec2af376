export { createPlatform, type Platform } from './platform.js';
export type { AdminOptions, ApiDocumentOptions, CourierOptions, CourierPlatformOptions, PlatformEvent, QuotaOptions } from './options.js';
export type { QuotaEvent } from './quota/events.js';
export type { AdminDecision } from './admin/options.js';
export type { RouteDoc, RouteBodyDoc, RouteResponseDoc, ResponseHeaderName, SecuritySchemeName } from './core/route-doc.js';
export type { GuardedRouteDoc } from './guard/guarded-doc.js';
export type { PlatformRequest, PlatformResponse, HeaderValue } from './core/http.js';
export type { Envelope } from './core/envelope.js';
export type { Logger, LogFields } from './core/logger.js';
export {
  PlatformError,
  ConfigurationError,
  HostCallbackError,
  ValidationError,
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  ConflictError,
  NotFoundError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  TooManyFailuresError,
  UpstreamError,
  UpstreamTimeoutError,
  StoreUnavailableError,
  PLATFORM_ERROR_STATUS,
  type PlatformErrorCode,
  type ConfigurationErrorCode,
  type FieldIssue,
} from './core/errors.js';
export { ERROR_CODES, type ErrorCode } from './error-codes.js';
export { StoreBusyError, StoreDataError, StoreFailedError, StoreTimeoutError, type StoreCallError } from './core/store-errors.js';
export type { StoreCall } from './core/store-guard.js';
export type { StoreConnection } from './core/store-connection.js';
export { OAuthUnavailableError, type OAuthErrorCode } from './oauth/errors.js';
export { canonicalString, md5Signer, hmacSha256Signer, type Signer, type SignerOption, type SignFields } from './courier/signing.js';
export type { CourierTransport, UpstreamCall } from './courier/transport.js';
export type { CourierCredentials } from './courier/proxy.js';
export { COURIER_OPERATION_NAMES, type CourierOperationName, type UpstreamEnvelope } from './courier/operations.js';
export type { Clock } from './core/clock.js';
export type {
  OAuthOptions,
  OAuthUser,
  OAuthClientConfig,
  OAuthLifetimes,
  BruteForceOptions,
} from './oauth/options.js';
export type { SigningKeyInput } from './oauth/keys.js';
export type { OAuthEvent, OAuthEventType } from './oauth/events.js';
export { hashClientSecret, verifyClientSecret } from './oauth/client-secret.js';
export { createLoginThrottle, type LoginAttempt, type LoginThrottle, type LoginThrottleOptions } from './oauth/login-throttle.js';
export {
  createMemoryOAuthStore,
  createRedisOAuthStore,
  createPostgresOAuthStore,
  oauthMigrationSql,
  type OAuthStore,
  type OAuthClientRecord,
  type AuthorizedUser,
  type TokenRef,
  type AuthorizationCodeRecord,
  type AccessTokenRecord,
  type RefreshTokenRecord,
  type ClientTokenRecord,
  type NewToken,
  type NewTokens,
  type RotationOutcome,
  type GrantType,
  type RedisLike,
  type PgQueryable,
  type PostgresOAuthStore,
  type RedisOAuthStore,
  type MemoryOAuthStoreOptions,
  type RedisOAuthStoreOptions,
  type PostgresOAuthStoreOptions,
} from './oauth/store/index.js';
export type { HistoryOptions } from './history/options.js';
export type { HistoryPoint, HistoryQuery, HistoryRetention, HistoryStep, HourCount, UsageHistoryStore } from './history/types.js';
export type { GuardVerdict } from './guard/guard.js';
export {
  createQuotaService,
  guardVerdict,
  QuotaStoreError,
  QuotaStoreTimeoutError,
  QuotaExceededError,
  QuotaStoreUnavailableError,
  createMemoryQuotaStore,
  createRedisQuotaStore,
  createPostgresQuotaStore,
  quotaMigrationSql,
  createStaticRuleSource,
  normalizeApiPath,
  SYSTEM_DEFAULTS,
  type QuotaStore,
  type QuotaRule,
  type QuotaDefaults,
  type QuotaScope,
  type RuleSource,
  type QuotaIdentity,
  type QuotaPeriod,
  type QuotaReport,
  type OnStoreError,
  type PostgresQuotaStore,
  type RedisQuotaStore,
  type MemoryQuotaStoreOptions,
  type RedisQuotaStoreOptions,
  type PostgresQuotaStoreOptions,
  type QuotaService,
  type QuotaServiceOptions,
  type QuotaDecision,
  type QuotaInspection,
  type TokenVerifier,
} from './quota/index.js';
