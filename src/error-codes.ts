/**
 * Every `code` an error of courier-platform can carry, in one list: docs/errors.md documents each
 * (a test keeps the two equal).
 */
import { CONFIGURATION_ERROR_CODES, PLATFORM_ERROR_STATUS, type ConfigurationErrorCode, type PlatformErrorCode } from './core/errors.js';
import { OAUTH_ERROR_CODES, type OAuthErrorCode } from './oauth/errors.js';
import type { StoreCallError } from './core/store-errors.js';

/** Why a store call gave no answer: the same codes for the OAuth store, the quota store and the admin API. */
export type StoreCallErrorCode = StoreCallError['code'];

/** The code of any error the library throws, rejects with or answers with. */
export type ErrorCode = PlatformErrorCode | ConfigurationErrorCode | OAuthErrorCode | StoreCallErrorCode;

const STORE_CALL_ERROR_CODES: readonly StoreCallErrorCode[] = ['store_failed', 'store_timeout', 'store_busy'];

export const ERROR_CODES: readonly ErrorCode[] = [
  ...new Set<ErrorCode>([
    ...CONFIGURATION_ERROR_CODES,
    ...(Object.keys(PLATFORM_ERROR_STATUS) as PlatformErrorCode[]),
    ...OAUTH_ERROR_CODES,
    ...STORE_CALL_ERROR_CODES,
  ]),
];
