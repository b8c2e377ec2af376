/**
 * docs/errors.md against the code: every code the library can carry is documented, with the
 * status each error class really answers with.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  ForbiddenError,
  BadRequestError,
  CONFIGURATION_ERROR_CODES,
  HostCallbackError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PLATFORM_ERROR_STATUS,
  PlatformError,
  StoreUnavailableError,
  TooManyFailuresError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  UpstreamError,
  UpstreamTimeoutError,
  ValidationError,
} from '../../src/core/errors.js';
import { StoreBusyError } from '../../src/core/store-errors.js';
import { ERROR_CODES } from '../../src/error-codes.js';
import { OAUTH_ERROR_CODES, OAuthUnavailableError } from '../../src/oauth/errors.js';
import { QuotaExceededError, QuotaStoreError, QuotaStoreTimeoutError, QuotaStoreUnavailableError } from '../../src/quota/errors.js';

const page = readFileSync(fileURLToPath(new URL('../../docs/errors.md', import.meta.url)), 'utf8');

/** The code and status cells of the table under a `## heading`. */
function table(heading: string): Map<string, string> {
  const section = page.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  expect(section, `a section "## ${heading}"`).toBeDefined();
  const rows = new Map<string, string>();
  for (const line of section!.split('\n')) {
    const match = /^\| `([a-z_]+)` \| ([^|]+) \|/.exec(line);
    if (match) rows.set(match[1]!, match[2]!.trim());
  }
  return rows;
}

describe('docs/errors.md', () => {
  const configuration = table('Configuration errors');
  const http = table('HTTP errors');
  const oauth = table('OAuth error codes');
  const store = table('Store errors');

  it('documents every code, and no code the library does not have', () => {
    const documented = new Set([...configuration.keys(), ...http.keys(), ...oauth.keys(), ...store.keys()]);
    expect([...documented].sort()).toEqual([...ERROR_CODES].sort());
  });

  it('each table holds its kind of code', () => {
    expect([...configuration.keys()].sort()).toEqual([...CONFIGURATION_ERROR_CODES].sort());
    expect([...http.keys()].sort()).toEqual(Object.keys(PLATFORM_ERROR_STATUS).sort());
    expect([...oauth.keys()].sort()).toEqual([...OAUTH_ERROR_CODES].sort());
    expect([...store.keys()].sort()).toEqual(
      [new QuotaStoreError('store', new Error('x')).code, new QuotaStoreTimeoutError('store', 1).code, new StoreBusyError('quota store', 'full').code].sort(),
    );
  });

  it.each(Object.entries(PLATFORM_ERROR_STATUS))('%s is documented with HTTP %i', (code, status) => {
    expect(http.get(code)).toBe(String(status));
  });

  it('configuration errors are thrown, never answered', () => {
    for (const status of configuration.values()) expect(status).toMatch(/^none/);
  });
});

describe('every HTTP error class answers with the status of its code', () => {
  const samples: PlatformError[] = [
    new ValidationError([{ field: 'a', rule: 'required', message: 'is required' }]),
    new BadRequestError('bad'),
    new BadRequestError('sent api', 'forbidden_field'),
    new UnauthorizedError('who?'),
    new ForbiddenError('not you'),
    new NotFoundError('where?'),
    new ConflictError('read-only'),
    new MethodNotAllowedError(['GET']),
    new PayloadTooLargeError(10),
    new UnsupportedMediaTypeError('form only'),
    new QuotaExceededError('used up', null, {}),
    new TooManyFailuresError('wrong tokens', 900),
    new HostCallbackError('authenticate threw'),
    new UpstreamError('down'),
    new OAuthUnavailableError(new Error('store down')),
    new QuotaStoreUnavailableError(),
    new StoreUnavailableError('OAuth store'),
    new UpstreamTimeoutError(10),
  ];

  it.each(samples.map((error) => [error.name, error] as const))('%s', (_, error) => {
    expect(error.status).toBe(PLATFORM_ERROR_STATUS[error.code]);
    expect(error).toBeInstanceOf(PlatformError);
  });

  it('covers every code but the catch-all internal_error', () => {
    expect(new Set(samples.map((error) => error.code))).toEqual(new Set(Object.keys(PLATFORM_ERROR_STATUS).filter((code) => code !== 'internal_error')));
  });
});
