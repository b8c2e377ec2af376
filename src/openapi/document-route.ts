/** GET {quota.basePath}/openapi.json: the API document of every route the platform answers. */
import { z } from 'zod';
import { errorEnvelope } from '../core/envelope.js';
import { jsonResponse, type PlatformRequest } from '../core/http.js';
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

export function apiDocumentRoute(basePath: string, source: ApiDocumentSource): Route {
  let documented: { count: number; paths: DocumentedPaths } | undefined;
  return {
    method: 'GET',
    path: `${basePath}/openapi.json`,
    formatError: errorEnvelope,
    doc: {
      operationId: 'openapi_document',
      summary: 'This document: every endpoint the platform answers, in OpenAPI 3.1',
      tag: 'quota',
      responses: { 200: { description: 'The OpenAPI 3.1 document', schema: z.looseObject({ openapi: z.string() }), headers: ['Cache-Control'] } },
    },
    async handler(request) {
      const routes = source.routes();
      if (documented?.count !== routes.length) documented = { count: routes.length, paths: documentPaths(routes) };
      const document = apiDocument(documented.paths, {
        info: source.info,
        ...serverUrls(request, source.publicUrl),
        ...(source.oauthIssuer ? { oauthIssuer: source.oauthIssuer(request) } : {}),
        ...(source.extraPaths ? { extraPaths: source.extraPaths } : {}),
      });
      // Without publicUrl its URLs come from the request's Host: a cache must not answer one Host with another's.
      return jsonResponse(200, document, { 'cache-control': 'public, max-age=300', ...(source.publicUrl ? {} : { vary: 'Host' }) });
    },
  };
}
