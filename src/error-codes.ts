/**
 * Every `code` an error of courier-platform can carry, in one list: docs/errors.md documents each
 * (a test keeps the two equal).
 */
import { CONFIGURATION_ERROR_CODES, PLATFORM_ERROR_STATUS, type ConfigurationErrorCode, type PlatformErrorCode } from './core/errors.js';
import { OAUTH_ERROR_CODES, type OAuthErrorCode } from './oauth/errors.js';
import { QuotaStoreError, QuotaStoreTimeoutError } from './quota/errors.js';

export type QuotaDependencyErrorCode = QuotaStoreError['code'] | QuotaStoreTimeoutError['code'];

/** The code of any error the library throws, rejects with or answers with. */
export type ErrorCode = PlatformErrorCode | ConfigurationErrorCode | OAuthErrorCode | QuotaDependencyErrorCode;

const QUOTA_DEPENDENCY_ERROR_CODES: readonly QuotaDependencyErrorCode[] = ['quota_store_failed', 'quota_store_timeout'];

export const ERROR_CODES: readonly ErrorCode[] = [
  ...new Set<ErrorCode>([
    ...CONFIGURATION_ERROR_CODES,
    ...(Object.keys(PLATFORM_ERROR_STATUS) as PlatformErrorCode[]),
    ...OAUTH_ERROR_CODES,
    ...QUOTA_DEPENDENCY_ERROR_CODES,
  ]),
];
