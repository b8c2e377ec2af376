/**
 * Turning quota decisions into HTTP, framework-neutral (PlatformResponse and plain header maps).
 *
 * Headers follow the IETF httpapi ratelimit-headers draft, draft-10 syntax (structured-field
 * lists, one item per period):
 *
 *   RateLimit-Policy: "minute";q=60;w=60, "day";q=1000;w=86400, "month";q=50000
 *   RateLimit: "minute";r=57;t=23, "day";r=997;t=50000, "month";r=49997;t=1500000
 *
 * - `q` the limit, `w` the window in seconds (60 for the minute, 86 400 for the day even on a
 *   23- or 25-hour DST day: it names the policy, not today's length; omitted for the month,
 *   whose length varies), `r` the units remaining, `t` seconds until the period resets
 *   (rounded up).
 * - An unlimited period has no item in either header (there is no quota to announce); when every
 *   period is unlimited both headers are left out.
 * - Header names are lower-case, as everywhere in PlatformResponse.
 */
import { errorEnvelope, ok } from '../core/envelope.js';
import { configurationError } from '../core/errors.js';
import type { PlatformResponse } from '../core/http.js';
import type { QuotaDecision, QuotaPeriodState, QuotaRejected } from './decision.js';
import { QuotaExceededError, QuotaStoreUnavailableError } from './errors.js';
import type { QuotaPeriod } from './periods.js';
import type { QuotaInspection } from './report.js';
import type { ResolvedQuotaRule } from './rules.js';

const WINDOW_SECONDS: Record<QuotaPeriod, number | undefined> = { minute: 60, day: 86_400, month: undefined };

function limited(period: QuotaPeriodState): boolean {
  return !period.unlimited && period.limit > 0;
}

function secondsUntil(resetAt: number, now: number): number {
  return Math.max(0, Math.ceil((resetAt - now) / 1000));
}

// Plain loops rather than filter/map/join: `ratelimit` is built on every guarded call.

/** `"minute";q=60;w=60, "day";q=1000;w=86400, "month";q=50000`, or undefined when nothing is limited. */
export function rateLimitPolicyHeader(periods: readonly QuotaPeriodState[]): string | undefined {
  let header = '';
  for (const p of periods) {
    if (!limited(p)) continue;
    const w = WINDOW_SECONDS[p.period];
    header += `${header ? ', ' : ''}"${p.period}";q=${p.limit}${w === undefined ? '' : `;w=${w}`}`;
  }
  return header || undefined;
}

/** An item's text up to its `r` value, first in the list or after another item. */
function itemStart(period: QuotaPeriod, first: boolean): string {
  // A switch rather than a table: a read keyed by the period's name sees three names and goes megamorphic.
  switch (period) {
    case 'minute':
      return first ? '"minute";r=' : ', "minute";r=';
    case 'day':
      return first ? '"day";r=' : ', "day";r=';
    default:
      return first ? '"month";r=' : ', "month";r=';
  }
}

/** `"minute";r=57;t=23, ...` at `now`, or undefined when nothing is limited. */
export function rateLimitHeader(periods: readonly QuotaPeriodState[], now: number): string | undefined {
  // Four pieces an item: every piece is a node the string is flattened from when it is sent.
  let header = '';
  for (const p of periods) {
    if (!limited(p)) continue;
    header += itemStart(p.period, header === '') + Math.max(0, p.remaining) + ';t=' + secondsUntil(p.resetAt, now);
  }
  return header || undefined;
}

// The policy follows from the rule alone when the store counted all three periods; the service
// hands out one rule object per client and path, so this is computed once per endpoint.
const policies = new WeakMap<ResolvedQuotaRule, string | undefined>();
function policyOf(rule: ResolvedQuotaRule, periods: readonly QuotaPeriodState[]): string | undefined {
  if (!policies.has(rule)) policies.set(rule, rateLimitPolicyHeader(periods));
  return policies.get(rule);
}

/**
 * The headers every guarded response carries (`ratelimit-policy`, `ratelimit`), plus
 * `retry-after` on a rejection. Empty for `store_unavailable`.
 */
export function quotaHeaders(decision: QuotaDecision): Record<string, string> {
  if (decision.outcome === 'store_unavailable') return {};
  const policy = decision.source === 'store' ? policyOf(decision.rule, decision.periods) : rateLimitPolicyHeader(decision.periods);
  const state = rateLimitHeader(decision.periods, decision.now);
  // One literal, so every admitted call's headers share one shape and the adapters' loop over
  // them takes V8's cached path instead of a runtime call.
  const headers: Record<string, string> = policy !== undefined && state !== undefined ? { 'ratelimit-policy': policy, ratelimit: state } : {};
  if (decision.outcome === 'rejected') headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}

/** `data` of the 429 body. */
export interface QuotaExceededData {
  api_path: string;
  period: QuotaPeriod;
  /** ISO 8601 UTC. */
  reset_at: string;
}

export function quotaExceededMessage(decision: QuotaRejected): string {
  const state = decision.periods.find((p) => p.period === decision.period);
  const limit = state ? ` of ${state.limit}` : '';
  const resetAt = new Date(decision.resetAt).toISOString();
  return `Quota exceeded for ${decision.apiPath}: the ${decision.period} limit${limit} is used up; retry after ${resetAt}`;
}

/** 429, `Retry-After`, the ratelimit headers, body `{ code: 1, message, data: { api_path, period, reset_at } }`. */
export function quotaExceededResponse(decision: QuotaRejected): PlatformResponse {
  const data: QuotaExceededData = { api_path: decision.apiPath, period: decision.period, reset_at: new Date(decision.resetAt).toISOString() };
  return errorEnvelope(new QuotaExceededError(quotaExceededMessage(decision), data, quotaHeaders(decision)));
}

/** 503, code 1: the store failed and `onStoreError` is `'closed'` (or get_quota could not read). */
export function storeUnavailableResponse(): PlatformResponse {
  return errorEnvelope(new QuotaStoreUnavailableError());
}

/**
 * What the guard does with a decision: pass on to the host's handler with these headers added
 * to its response, or answer this response instead.
 *
 * @example
 * const verdict = guardVerdict(await quota.consume(identity.clientId, request.path));
 * if (!verdict.pass) return verdict.response;
 * const response = await hostHandler(request);
 * Object.assign(response.headers, verdict.headers);
 */
export function guardVerdict(decision: QuotaDecision): { pass: true; headers: Record<string, string> } | { pass: false; response: PlatformResponse } {
  switch (decision.outcome) {
    case 'admitted':
      return { pass: true, headers: quotaHeaders(decision) };
    case 'rejected':
      return { pass: false, response: quotaExceededResponse(decision) };
    case 'store_unavailable':
      return { pass: false, response: storeUnavailableResponse() };
    default:
      throw configurationError('invalid_argument', 'decision.outcome', 'must be admitted, rejected or store_unavailable');
  }
}

/** get_quota's answer: `{ code: 0, message: 'ok', data: report, time }`, or the 503. */
export function quotaReportResponse(inspection: QuotaInspection): PlatformResponse {
  if (inspection.outcome === 'store_unavailable') return storeUnavailableResponse();
  return ok(inspection.report, { time: inspection.time });
}
