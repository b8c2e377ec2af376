import { z } from 'zod';
import { basePathOption, functionOption, httpUrlOption, nonEmptyText, positiveInteger } from '../core/option-schemas.js';
import type { CourierCredentials } from './proxy.js';
import type { Signer, SignerOption } from './signing.js';
import type { CourierTransport } from './transport.js';

/** Options of the courier proxy (`courierPlatform({ courier })`); every one is documented in docs/options.md. */
export interface CourierOptions {
  /** Where the courier open platform listens. Without it (and without `transport`) calls go to the built-in sandbox. */
  upstreamUrl?: string;
  /** Used when a caller sends no Basic Auth. Without them every call needs Basic Auth. */
  credentials?: CourierCredentials;
  /** The `version` field sent upstream. Default `'1.0'`. */
  version?: string;
  /** `'md5'` (default), `'hmac-sha256'` or `(fields, appSecret) => sign`. */
  signer?: SignerOption;
  /** Deadline of one upstream call, in ms. Default 10 000. */
  timeoutMs?: number;
  /** Extra attempts for read operations after a connection failure or 502/503/504. Default 2. */
  retries?: number;
  /** Replaces the HTTP transport (undici), e.g. with axios or an in-process sandbox. */
  transport?: CourierTransport;
  /** Where the proxy is mounted. Default `'/courier'`. */
  basePath?: string;
}

/** The courier part's options: the one place they are checked and their defaults set. */
export const courierOptionsSchema = z.strictObject({
  upstreamUrl: httpUrlOption.optional(),
  credentials: z.strictObject({ appId: nonEmptyText, appSecret: nonEmptyText }).optional(),
  version: nonEmptyText.default('1.0'),
  signer: z.union([z.literal(['md5', 'hmac-sha256']), functionOption<Signer>()], { error: "must be 'md5', 'hmac-sha256' or a function" }).default('md5'),
  timeoutMs: positiveInteger.default(10_000),
  retries: z.number().int().min(0).max(5).default(2),
  transport: functionOption<CourierTransport>().optional(),
  basePath: basePathOption.default('/courier'),
});

export type ResolvedCourierOptions = z.output<typeof courierOptionsSchema>;
