/** GET {quota.basePath}/openapi.json: the API document of every route the platform answers. */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { BoundedCache } from '../core/cache.js';
import { errorEnvelope } from '../core/envelope.js';
import { header, type PlatformRequest, type PlatformResponse } from '../core/http.js';
import { requestOrigin } from '../core/request-origin.js';
import type { Route } from '../core/router.js';
import { apiDocument, documentPaths, type ApiDocumentInfo, type DocumentedPaths, type DocumentedRoute, type PathItem } from './document.js';

export interface ApiDocumentSource {
  /** The route table and the host's guarded routes; read again only when more were described. */
  routes(): readonly DocumentedRoute[];
  info: ApiDocumentInfo;
  /** `oauth.publicUrl` when set. */
  publicUrl?: string;
  /** Where the OAuth endpoints answer for this request, while the OAuth server is on. */
  oauthIssuer?: (request: PlatformRequest) => string;
  extraPaths?: Readonly<Record<string, PathItem>>;
}

/**
 * Where the platform's paths count from: `oauth.publicUrl`, else the origin the caller used and
 * the mount path, as the issuer does. The host's own routes count from the same URL without the
 * mount path.
 */
function serverUrls(request: PlatformRequest, publicUrl: string | undefined): { serverUrl: string; rootUrl: string } {
  const mountPath = request.mountPath ?? '';
  const serverUrl = publicUrl ?? `${requestOrigin(request)}${mountPath}`;
  const rootUrl = mountPath !== '' && serverUrl.endsWith(mountPath) ? serverUrl.slice(0, -mountPath.length) : serverUrl;
  return { serverUrl, rootUrl };
}

/**
 * Documents as served, by the URLs they were built for: anyone may ask for the document, and
 * building and serialising it costs about ten courier calls, so each is built once. With
 * `oauth.publicUrl` there is one; without it each Host gets its own, the least recently used
 * going first.
 */
const DOCUMENTS_KEPT = 16;

interface Served {
  body: string;
  /** RFC 9110 8.8.3: a strong validator, from the bytes served. */
  etag: string;
}

/** RFC 9110 13.1.2: If-None-Match is a list of entity tags, or `*`; weak tags compare weakly. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

export function apiDocumentRoute(basePath: string, source: ApiDocumentSource): Route {
  let documented: { count: number; paths: DocumentedPaths } | undefined;
  const served = new BoundedCache<string, Served>({ max: DOCUMENTS_KEPT });
  const serve = (request: PlatformRequest): Served => {
    const routes = source.routes();
    if (documented?.count !== routes.length) {
      documented = { count: routes.length, paths: documentPaths(routes) };
      served.clear();
    }
    const urls = serverUrls(request, source.publicUrl);
    const oauthIssuer = source.oauthIssuer?.(request);
    const key = JSON.stringify([urls.serverUrl, urls.rootUrl, oauthIssuer]);
    let document = served.get(key);
    if (document === undefined) {
      const body = JSON.stringify(
        apiDocument(documented.paths, {
          info: source.info,
          ...urls,
          ...(oauthIssuer !== undefined ? { oauthIssuer } : {}),
          ...(source.extraPaths ? { extraPaths: source.extraPaths } : {}),
        }),
      );
      document = { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
      served.set(key, document);
    }
    return document;
  };
  return {
    method: 'GET',
    path: `${basePath}/openapi.json`,
    formatError: errorEnvelope,
    doc: {
      operationId: 'openapi_document',
      summary: 'This document: every endpoint the platform answers, in OpenAPI 3.1',
      tag: 'quota',
      responses: { 200: { description: 'The OpenAPI 3.1 document', schema: z.looseObject({ openapi: z.string() }), headers: ['Cache-Control', 'ETag'] } },
    },
    async handler(request): Promise<PlatformResponse> {
      const { body, etag } = serve(request);
      // Without publicUrl its URLs come from the request's Host: a cache must not answer one Host with another's.
      const headers = { 'cache-control': 'public, max-age=300', etag, ...(source.publicUrl ? {} : { vary: 'Host' }) };
      if (matches(header(request, 'if-none-match'), etag)) return { status: 304, headers, body: '' };
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body };
    },
  };
}
