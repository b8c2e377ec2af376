/** A host with every part of the platform on, and its API document as a caller reads it. */
import request from 'supertest';
import { expect } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { CourierPlatformOptions } from '../../src/options.js';
import type { Adapter } from '../support/apps.js';
import { SANDBOX_APP } from '../support/courier.js';
import { serve, type Served } from '../support/net.js';

export const ADMIN_TOKEN = 'operator-token-0123456789abcdef0123456789';

export type ApiDocument = {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; flows?: Record<string, { tokenUrl: string }> }> };
};

export interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { schema: object; example?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}

/** Every part on: the courier proxy on the sandbox upstream with configured credentials, OAuth, quota and (unless `admin: false`) the admin API. */
export function fullOptions(upstreamUrl: string, overrides: CourierPlatformOptions = {}): CourierPlatformOptions {
  return {
    logger: silentLogger,
    courier: { upstreamUrl, credentials: { ...SANDBOX_APP } },
    oauth: {},
    quota: {},
    admin: { token: ADMIN_TOKEN },
    ...overrides,
  };
}

export async function serveHost(adapter: Adapter, options: CourierPlatformOptions): Promise<Served> {
  return serve(adapter.build(options));
}

export async function fetchDocument(served: Served, path = '/openapi/v1/openapi.json'): Promise<ApiDocument> {
  const res = await request(served.server).get(path);
  expect(res.status, res.text).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.body as ApiDocument;
}

/** `{method, path}` of every operation of the document, as `GET /courier/get_address`. */
export function operationsOf(document: ApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
}
