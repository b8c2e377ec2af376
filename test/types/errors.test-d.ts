import { describe, expectTypeOf, it } from 'vitest';
import {
  BadRequestError,
  ConfigurationError,
  ConflictError,
  ForbiddenError,
  HostCallbackError,
  MethodNotAllowedError,
  NotFoundError,
  OAuthUnavailableError,
  PayloadTooLargeError,
  PlatformError,
  QuotaExceededError,
  QuotaStoreError,
  QuotaStoreTimeoutError,
  QuotaStoreUnavailableError,
  StoreBusyError,
  StoreFailedError,
  StoreTimeoutError,
  StoreUnavailableError,
  TooManyFailuresError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  UpstreamError,
  UpstreamTimeoutError,
  ValidationError,
  type ConfigurationErrorCode,
  type ErrorCode,
  type PlatformErrorCode,
  type StoreCallError,
} from '../../src/index.js';

describe('the error classes of the main entry (docs/errors.md)', () => {
  it('every HTTP error is a PlatformError whose code is one of the table', () => {
    const answers = [
      BadRequestError,
      ConflictError,
      ForbiddenError,
      HostCallbackError,
      MethodNotAllowedError,
      NotFoundError,
      OAuthUnavailableError,
      PayloadTooLargeError,
      QuotaExceededError,
      QuotaStoreUnavailableError,
      StoreUnavailableError,
      TooManyFailuresError,
      UnauthorizedError,
      UnsupportedMediaTypeError,
      UpstreamError,
      UpstreamTimeoutError,
      ValidationError,
    ];
    expectTypeOf<InstanceType<(typeof answers)[number]>>().toExtend<PlatformError>();
    expectTypeOf<PlatformError['code']>().toEqualTypeOf<PlatformErrorCode>();
    expectTypeOf<PlatformError['status']>().toEqualTypeOf<number>();
  });

  it('a PlatformError is built from its code, never from a status', () => {
    expectTypeOf(PlatformError).constructorParameters.toEqualTypeOf<[code: PlatformErrorCode, message: string, init?: { data?: unknown; headers?: Record<string, string>; cause?: unknown }]>();
    // @ts-expect-error a status is not a code
    new PlatformError(502, 'upstream_error', 'down');
  });

  it('a configuration error is a TypeError with a configuration code and the field', () => {
    expectTypeOf<ConfigurationError>().toExtend<TypeError>();
    expectTypeOf<ConfigurationError['code']>().toEqualTypeOf<ConfigurationErrorCode>();
    expectTypeOf<ConfigurationError['field']>().toEqualTypeOf<string>();
  });

  it('the store errors, the quota flavours included, carry store call codes', () => {
    expectTypeOf<QuotaStoreError>().toExtend<StoreFailedError>();
    expectTypeOf<QuotaStoreTimeoutError>().toExtend<StoreTimeoutError>();
    expectTypeOf<StoreBusyError | StoreFailedError | StoreTimeoutError>().toEqualTypeOf<StoreCallError>();
  });

  it('every code is an ErrorCode', () => {
    expectTypeOf<PlatformErrorCode | ConfigurationErrorCode | StoreCallError['code']>().toExtend<ErrorCode>();
  });
});
