import { jsonResponse, type PlatformResponse } from './http.js';
import type { PlatformError } from './errors.js';

/** The body every courier and OpenAPI response carries: `code` 0 on success, 1 on any failure. */
export interface Envelope<T = unknown> {
  code: 0 | 1;
  message: string;
  data: T;
  time?: string;
}

export function ok<T>(data: T, extra: { time?: string; headers?: Record<string, string> } = {}): PlatformResponse {
  const body: Envelope<T> = { code: 0, message: 'ok', data };
  if (extra.time !== undefined) body.time = extra.time;
  return jsonResponse(200, body, extra.headers);
}

export function failure(status: number, message: string, data: unknown = null, headers: Record<string, string> = {}): PlatformResponse {
  const body: Envelope = { code: 1, message, data };
  return jsonResponse(status, body, headers);
}

export function errorEnvelope(error: PlatformError): PlatformResponse {
  return failure(error.status, error.message, error.data, error.headers);
}
