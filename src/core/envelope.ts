import { z } from 'zod';
import { jsonResponse, type PlatformResponse } from './http.js';
import type { PlatformError } from './errors.js';
import type { ResponseHeaderName, RouteResponseDoc } from './route-doc.js';

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

// The shapes above as zod schemas, for the API document (route-doc.ts).

/** `{ code: 0, message: 'ok', data, time? }`. */
export const okEnvelopeSchema = <T extends z.ZodType>(data: T) =>
  z.strictObject({ code: z.literal(0), message: z.string(), data, time: z.iso.datetime().optional() });

/** `{ code: 1, message, data }`; `data` is null unless the error says more. */
export const failureEnvelopeSchema = <T extends z.ZodType>(data: T) => z.strictObject({ code: z.literal(1), message: z.string(), data });

/** `data` of a 400 that names the fields (ValidationError, `forbidden_field`), null for a body that is not JSON. */
export const fieldErrorsSchema = z.object({ errors: z.array(z.object({ field: z.string(), rule: z.string(), message: z.string() })) }).nullable();

/** An error answered as the envelope. */
export function envelopeError(description: string, headers?: readonly ResponseHeaderName[], data: z.ZodType = z.null()): RouteResponseDoc {
  return { description, schema: failureEnvelopeSchema(data), ...(headers ? { headers } : {}) };
}
