/**
 * docs/errors.md against the code: every code the library can carry is documented, and each
 * error class is answered with the status the page gives its code.
 */
import { readdirSync, readFileSync } from 'node:fs';
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
import { errorEnvelope } from '../../src/core/envelope.js';
import { StoreBusyError } from '../../src/core/store-errors.js';
import { ERROR_CODES } from '../../src/error-codes.js';
import * as mainEntry from '../../src/index.js';
import { OAUTH_ERROR_CODES, OAuthUnavailableError } from '../../src/oauth/errors.js';
import { QuotaExceededError, QuotaStoreError, QuotaStoreTimeoutError, QuotaStoreUnavailableError } from '../../src/quota/errors.js';

const docs = fileURLToPath(new URL('../../docs/', import.meta.url));
const page = readFileSync(`${docs}errors.md`, 'utf8');

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

  it('configuration errors are thrown, never answered', () => {
    for (const status of configuration.values()) expect(status).toMatch(/^none/);
  });
});

describe('every HTTP error class is answered with the status docs/errors.md gives its code', () => {
  const http = table('HTTP errors');
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
    new PlatformError('internal_error', 'Internal error'),
    new HostCallbackError('authenticate threw'),
    new UpstreamError('down'),
    new OAuthUnavailableError(new Error('store down')),
    new QuotaStoreUnavailableError(),
    new StoreUnavailableError('OAuth store'),
    new UpstreamTimeoutError(10),
  ];

  it.each(samples.map((error) => [`${error.name} (${error.code})`, error] as const))('%s', (_, error) => {
    const answer = errorEnvelope(error);
    expect(String(answer.status)).toBe(http.get(error.code));
    expect(JSON.parse(answer.body)).toMatchObject({ code: 1, message: error.message });
  });

  it('covers every code of the table', () => {
    expect(new Set(samples.map((error) => error.code))).toEqual(new Set(Object.keys(PLATFORM_ERROR_STATUS)));
  });
});

describe('the main entry exports every error class the docs name', () => {
  const pages = [...readdirSync(docs).filter((file) => file.endsWith('.md')).map((file) => `${docs}${file}`), fileURLToPath(new URL('../../README.md', import.meta.url))];
  const named = new Set(pages.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/`([A-Z][A-Za-z]*Error)`/g)].map((match) => match[1]!)));
  // TypeError and its kin are JavaScript's own.
  const ours = [...named].filter((name) => !(name in globalThis)).sort();

  it('finds the classes on docs/errors.md', () => {
    expect(ours).toEqual(expect.arrayContaining(['ConfigurationError', 'PlatformError', 'StoreFailedError', 'StoreUnavailableError']));
  });

  it.each(ours)('%s', (name) => {
    const exported: unknown = (mainEntry as Record<string, unknown>)[name];
    expect(exported, `courier-platform exports ${name}`).toBeTypeOf('function');
    expect((exported as { prototype: unknown }).prototype).toBeInstanceOf(Error);
  });
});
