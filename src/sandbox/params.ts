/**
 * Readers for business parameters. The sandbox is lenient (numbers may come as numeric strings,
 * unused fields are ignored) but every field it uses is checked, and a bad one is a 40004 whose
 * message names the field and the rule.
 */
import { SandboxCode, SandboxError, show } from './codes.js';

/** The parsed upstream body (business params plus api, appId, version, sign). */
export type Params = Readonly<Record<string, unknown>>;

export function invalidParameter(field: string, rule: string): SandboxError {
  return new SandboxError(SandboxCode.INVALID_PARAMETER, `invalid parameter ${field}: ${rule}`);
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

const INTEGER_TEXT = /^-?\d{1,15}$/;
const DECIMAL_TEXT = /^-?\d{1,15}(\.\d+)?$/;

/** An integer field (a number or a string of digits), or undefined when absent. */
export function optionalInt(params: Params, field: string): number | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw invalidParameter(field, `must be an integer, got ${show(value)}`);
  return n;
}

export function requiredInt(params: Params, field: string): number {
  const n = optionalInt(params, field);
  if (n === undefined) throw invalidParameter(field, 'is required');
  return n;
}

/** An integer field that must be one of `allowed`. */
export function optionalEnum(params: Params, field: string, allowed: readonly number[]): number | undefined {
  const n = optionalInt(params, field);
  if (n !== undefined && !allowed.includes(n)) {
    throw invalidParameter(field, `must be one of ${allowed.join(', ')}, got ${show(params[field])}`);
  }
  return n;
}

export function requiredEnum(params: Params, field: string, allowed: readonly number[]): number {
  const n = optionalEnum(params, field, allowed);
  if (n === undefined) throw invalidParameter(field, `is required (one of ${allowed.join(', ')})`);
  return n;
}

/** A finite number >= 0 (a number or a decimal string), or undefined when absent. */
export function optionalAmount(params: Params, field: string): number | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL_TEXT.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < 0) throw invalidParameter(field, `must be a number >= 0, got ${show(value)}`);
  return n;
}

/**
 * The longest sellerOrderNo and cancelMemo the sandbox keeps, the lengths docs/courier.md gives
 * them: each is kept with its order, up to maxOrdersPerApp of them.
 */
export const MAX_REFERENCE_LENGTH = 64;
export const MAX_MEMO_LENGTH = 500;

/**
 * A non-empty string (numbers are accepted and rendered), or undefined when absent; at most
 * `maxLength` characters when given, as the proxy allows (a string the sandbox keeps with an order
 * must not let one caller fill its memory).
 */
export function optionalString(params: Params, field: string, maxLength?: number): string | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  const text = typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  if (text === undefined) throw invalidParameter(field, `must be a string, got ${show(value)}`);
  if (maxLength !== undefined && text.length > maxLength) {
    throw invalidParameter(field, `must be at most ${maxLength} characters, got ${text.length}`);
  }
  return text;
}

export function requiredString(params: Params, field: string): string {
  const text = optionalString(params, field);
  if (text === undefined) throw invalidParameter(field, 'is required');
  return text;
}

const DAY_MS = 86_400_000;
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 (UTC) of an instant. */
export function utcDayNumber(epochMs: number): number {
  return Math.floor(epochMs / DAY_MS);
}

/** A valid `YYYY-MM-DD` calendar date (returned as given), or undefined when absent. */
export function optionalDate(params: Params, field: string): string | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  const match = typeof value === 'string' ? DATE_TEXT.exec(value) : null;
  if (match) {
    const [, y, m, d] = match;
    const ms = Date.UTC(Number(y), Number(m) - 1, Number(d));
    if (new Date(ms).toISOString().slice(0, 10) === value) return value;
  }
  throw invalidParameter(field, `must be a calendar date YYYY-MM-DD, got ${show(value)}`);
}
