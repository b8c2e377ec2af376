import { Agent, request } from 'undici';
import { UpstreamError, UpstreamTimeoutError } from '../core/errors.js';
import type { CourierOperationName, UpstreamEnvelope } from './operations.js';

export interface UpstreamCall {
  api: CourierOperationName;
  /** The complete signed body: business fields plus api, appId, version and sign. */
  body: Record<string, unknown>;
  /** True for reads: only these may be retried, so an order is never created twice. */
  idempotent: boolean;
}

/**
 * Delivers one signed call to the courier platform and returns its envelope, or throws
 * UpstreamError (502) / UpstreamTimeoutError (504). Replace it to use another HTTP client.
 */
export type CourierTransport = (call: UpstreamCall) => Promise<UpstreamEnvelope>;

export interface HttpTransportOptions {
  url: string;
  /** One deadline for the whole call, retries included. */
  timeoutMs: number;
  /** Extra attempts for idempotent calls after a connection failure or a 502/503/504. */
  retries: number;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
const RETRY_BASE_DELAY_MS = 50;
/** An upstream envelope is small; a larger answer is a fault, not something to buffer. */
const MAX_RESPONSE_MIB = 10;
const MAX_RESPONSE_BYTES = MAX_RESPONSE_MIB * 1024 * 1024;
/** undici's code when an answer passes `maxResponseSize` (announced or while it streams in). */
const TOO_LARGE = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';
/**
 * A courier answer nests a few levels (a building's floors). JSON.parse accepts any depth, but
 * writing the answer back (JSON.stringify) recurses and overflows the stack a few thousand levels
 * down: deeper than this is a broken upstream (502), not a 500 of the platform.
 */
const MAX_RESPONSE_DEPTH = 64;

/** Whether the JSON `text` opens objects or arrays more than `max` levels deep: one pass, no recursion, no copy. */
function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++; // a backslash escapes the next character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) {
      if (++depth > max) return true;
    } else if (char === 0x7d || char === 0x5d) depth--;
  }
  return false;
}

/** Maps an upstream HTTP answer to its envelope, or throws the 502 of an answer that is not one. */
export function envelopeOf(status: number, text: string): UpstreamEnvelope {
  if (status >= 500) throw new UpstreamError(`The courier platform answered HTTP ${status}`);
  if (nestedDeeperThan(text, MAX_RESPONSE_DEPTH)) {
    throw new UpstreamError(`The courier platform answered JSON nested more than ${MAX_RESPONSE_DEPTH} levels deep`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamError(`The courier platform answered HTTP ${status} with a body that is not JSON`);
  }
  const envelope = parsed as Partial<UpstreamEnvelope> | null;
  // 1e999 parses as Infinity, which the caller's answer could only write as null (data.upstreamCode).
  if (typeof envelope !== 'object' || envelope === null || typeof envelope.code !== 'number' || !Number.isFinite(envelope.code)) {
    throw new UpstreamError('The courier platform answered JSON without a numeric code');
  }
  // A refusal may come with any status and keeps its message; a success must come with a 2xx:
  // code 0 on a 4xx (a gateway's or a misrouted URL's JSON) is not an answer to trust.
  if (envelope.code === 0 && (status < 200 || status >= 300)) {
    throw new UpstreamError(`The courier platform answered HTTP ${status} with code 0, which is not a success`);
  }
  return {
    code: envelope.code,
    message: typeof envelope.message === 'string' ? envelope.message : '',
    data: envelope.data ?? null,
  };
}

/** A failure worth another attempt for a read: the connection failed or a gateway said so. */
class TransientUpstreamError extends UpstreamError {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The default transport: undici over a keep-alive connection pool. (axios, measured on the
 * billing_fee call, cost 0.4 ms per call and half the throughput, more than the whole budget of
 * the proxy. Any client can still be plugged in through `courier.transport`.)
 */
export function createHttpTransport(options: HttpTransportOptions): CourierTransport {
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, maxResponseSize: MAX_RESPONSE_BYTES });

  const attempt = async (payload: string, remainingMs: number): Promise<UpstreamEnvelope> => {
    const signal = AbortSignal.timeout(remainingMs);
    try {
      const response = await request(options.url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: payload,
        signal,
      });
      if (RETRYABLE_STATUS.has(response.statusCode)) {
        await response.body.dump();
        throw new TransientUpstreamError(`The courier platform answered HTTP ${response.statusCode}`);
      }
      return envelopeOf(response.statusCode, await response.body.text());
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      if (signal.aborted) throw new UpstreamTimeoutError(options.timeoutMs, error);
      const code = (error as { code?: unknown }).code;
      // The upstream did answer: asking again would download the same oversized answer again.
      if (code === TOO_LARGE) throw new UpstreamError(`The courier platform's answer was larger than ${MAX_RESPONSE_MIB} MiB`, error);
      throw new TransientUpstreamError(`The courier platform could not be reached${typeof code === 'string' ? ` (${code})` : ''}`, error);
    }
  };

  // timeoutMs bounds the whole call, retries included: a caller never waits longer than it said.
  return async (call) => {
    const payload = JSON.stringify(call.body);
    const deadline = performance.now() + options.timeoutMs;
    const attempts = call.idempotent ? options.retries + 1 : 1;
    for (let n = 1; ; n++) {
      try {
        return await attempt(payload, Math.max(1, Math.ceil(deadline - performance.now())));
      } catch (error) {
        const delay = RETRY_BASE_DELAY_MS * 2 ** (n - 1);
        const timeLeft = deadline - performance.now() - delay > RETRY_BASE_DELAY_MS;
        if (!(error instanceof TransientUpstreamError) || n >= attempts || !timeLeft) throw error;
        await sleep(delay);
      }
    }
  };
}
