/** The admin API's options are checked at start, each mistake naming its field (docs/operator.md). */
import { describe, expect, it } from 'vitest';
import { createPlatform } from '../../src/platform.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';

function fieldOf(admin: unknown, rest: Record<string, unknown> = {}): string | undefined {
  try {
    createPlatform({ logger: silentLogger, courier: false, quota: false, oauth: false, admin: admin as never, ...rest });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as ConfigurationError).field;
  }
  return undefined;
}

describe('admin options', () => {
  it('needs a token or an operator check', () => {
    expect(fieldOf({})).toBe('admin.token');
  });

  it('refuses a short token, a non-function check and an unknown option', () => {
    expect(fieldOf({ token: 'short' })).toBe('admin.token');
    expect(fieldOf({ authorize: 'yes' })).toBe('admin.authorize');
    expect(fieldOf({ token: 'x'.repeat(32), tokn: 1 })).toBe('admin.tokn');
  });

  it('refuses a token a Bearer header cannot carry (RFC 6750 2.1): a space, a quote, a colon', () => {
    for (const token of [`${'x'.repeat(32)} y`, `${'x'.repeat(32)}"`, `${'x'.repeat(32)}:y`]) expect([token, fieldOf({ token })]).toEqual([token, 'admin.token']);
    expect(fieldOf({ token: `${'A1-._~+/'.repeat(4)}==` })).toBeUndefined();
  });

  it('refuses a base path inside another part', () => {
    expect(fieldOf({ token: 'x'.repeat(32), basePath: '/courier/admin' }, { courier: {} })).toBe('admin.basePath');
  });

  it('is off by default and accepted when well formed', () => {
    expect(fieldOf(false)).toBeUndefined();
    expect(fieldOf({ token: 'x'.repeat(32), basePath: '/ops', allowedOrigins: ['https://ops.example.com', 'http://127.0.0.1:8080'] })).toBeUndefined();
  });

  it('takes origins only in allowedOrigins: a path or trailing slash would never equal what a browser sends', () => {
    for (const bad of ['https://ops.example.com/', 'https://ops.example.com/console', 'ops.example.com', 'ftp://ops.example.com', 'https://OPS.example.com']) {
      expect([bad, fieldOf({ token: 'x'.repeat(32), allowedOrigins: [bad] })]).toEqual([bad, 'admin.allowedOrigins[0]']);
    }
  });
});
