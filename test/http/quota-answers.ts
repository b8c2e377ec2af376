/**
 * What the quota tests over HTTP start hosts with (DEFAULTS) and expect of an answer: the resets
 * the injected clock (quota-helpers.ts, START) implies, the 401 challenges, the RateLimit headers.
 */
import type { Response } from 'supertest';
import { afterEach, describe, expect } from 'vitest';
import type { QuotaOptions } from '../../src/options.js';
import { ADAPTER_NAMES, CONFIDENTIAL, closeHosts, startHost, type AdapterName, type HostSetup, type QuotaHost } from './quota-helpers.js';

// The injected clock starts 15 s into a minute: every "seconds until" below follows from that.
export const MINUTE_RESET = '2031-05-12T08:31:00.000Z';
export const DAY_RESET = '2031-05-13T00:00:00.000Z';
export const MONTH_RESET = '2031-06-01T00:00:00.000Z';
export const T_MINUTE = 45;
export const T_DAY = 55_785;
export const T_MONTH = 1_697_385;
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const DEFAULTS: QuotaOptions = { defaults: { minute: 3 } };

/** Starts a host with DEFAULTS, or the quota a test gives. */
export type HostStarter = (quota?: QuotaOptions, extra?: Omit<HostSetup, 'quota'>) => Promise<QuotaHost>;

/**
 * The frame of the quota-*.test.ts files: their tests once per adapter, each with a starter of
 * hosts on that adapter, every host closed after each test.
 */
export function describeQuotaOnEveryAdapter(tests: (start: HostStarter) => void): void {
  describe.each(ADAPTER_NAMES)('quota over HTTP on %s', (adapter: AdapterName) => {
    afterEach(closeHosts);
    tests((quota = DEFAULTS, extra = {}) => startHost(adapter, { quota, ...extra }));
  });
}
export const ALICE_AUTH = { clientId: CONFIDENTIAL.id, sub: 'user-alice', scope: ['openid', 'profile'] };

/** 401, code 1, `WWW-Authenticate: Bearer ... error="invalid_token"` (docs/quota.md). */
export function expectInvalidToken(res: Response): void {
  expect(res.status, res.text).toBe(401);
  expect(res.body).toMatchObject({ code: 1 });
  expect((res.body as { message?: unknown }).message).toEqual(expect.stringMatching(/\S/));
  expect(res.headers['www-authenticate']).toMatch(/^Bearer\b.*\berror="invalid_token"/);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

/** RFC 6750 3.1: a request without Bearer credentials gets the challenge and no error code. */
export function expectNoCredentials(res: Response): void {
  expect(res.status, res.text).toBe(401);
  expect(res.body).toMatchObject({ code: 1 });
  expect(res.headers['www-authenticate']).toBe('Bearer realm="openapi"');
}

export function expectRateLimit(res: Response, policy: string, state: string): void {
  expect(res.headers['ratelimit-policy']).toBe(policy);
  expect(res.headers.ratelimit).toBe(state);
}
