/**
 * What a route says about itself, for a description of the platform's endpoints built from the
 * route table. Each part declares it beside the route, from the same zod schemas that validate
 * the requests, so the description cannot drift from what the platform answers.
 */
import type { z } from 'zod';

/** Security schemes of the API document; a route lists the ones that admit a caller. */
export type SecuritySchemeName = 'courierBasic' | 'clientBasic' | 'bearer' | 'oauth2' | 'adminBearer';

export interface RouteBodyDoc {
  contentType: 'application/json' | 'application/x-www-form-urlencoded';
  schema: z.ZodType;
  /** A body the route accepts, as an example for callers. */
  example?: unknown;
}

/** Response headers the API document describes; each is explained once, in the document. */
export type ResponseHeaderName = 'Location' | 'Retry-After' | 'WWW-Authenticate' | 'RateLimit' | 'RateLimit-Policy' | 'Cache-Control' | 'ETag';

export interface RouteResponseDoc {
  description: string;
  /** The JSON body; for envelope routes, the whole envelope. */
  schema?: z.ZodType;
  /** Default `application/json` when there is a schema. */
  contentType?: string;
  /** Headers worth documenting (`RateLimit`, `Retry-After`, `Location`). */
  headers?: readonly ResponseHeaderName[];
}

export interface RouteDoc {
  /** Stable and unique across the platform (`create_order`, `oauth_token`, `admin_list_clients`). */
  operationId: string;
  summary: string;
  description?: string;
  /** `courier`, `quota`, `oauth`, `admin`, or the host's own. */
  tag: string;
  /** Any one of these admits a caller; absent or empty: no credentials. */
  security?: readonly SecuritySchemeName[];
  /** The route also answers a caller without any of `security` (the courier proxy with configured credentials). */
  credentialsOptional?: boolean;
  query?: z.ZodType;
  body?: RouteBodyDoc;
  /** By status code. */
  responses: Readonly<Record<number, RouteResponseDoc>>;
}
