/**
 * `{admin}/console`: the operator console (docs/operator.md#console), a page of the package's own
 * that works through the admin API only. The page and its files hold no data, so they are served
 * without the operator check; every figure the page shows comes from an admin API call, which
 * makes the check. The Content-Security-Policy admits this origin's scripts, styles and fetches
 * only: no inline code, no other origin, no framing.
 */
import { z } from 'zod';
import { adminErrorEnvelope } from '../route.js';
import { NotFoundError } from '../../core/errors.js';
import { header, type PlatformResponse } from '../../core/http.js';
import type { Route } from '../../core/router.js';
import { consoleAssets, type ConsoleAsset } from './assets.js';
import { consolePage, type ConsoleParts } from './page.js';

const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function assetResponse(asset: ConsoleAsset, ifNoneMatch: string | undefined): PlatformResponse {
  // The name carries the content's digest, so a copy may be kept for good (RFC 8246 immutable).
  const headers = { ...SECURITY_HEADERS, 'cache-control': 'public, max-age=31536000, immutable', etag: asset.etag };
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === asset.etag)) return { status: 304, headers, body: '' };
  return { status: 200, headers: { ...headers, 'content-type': asset.contentType }, body: asset.body };
}

export function consoleRoutes(basePath: string, parts: ConsoleParts): Route[] {
  const assets = consoleAssets();
  const byName = new Map([...assets.styles, ...assets.scripts].map((asset) => [asset.name, asset]));
  const body = consolePage(assets, parts);
  return [
    {
      method: 'GET',
      path: `${basePath}/console`,
      formatError: adminErrorEnvelope,
      doc: {
        operationId: 'admin_console',
        summary: 'The operator console: a page that works through this admin API',
        description: 'The page holds no data and is served without credentials; each of its calls to the admin API makes the operator check.',
        tag: 'admin',
        responses: { 200: { description: 'The page', contentType: 'text/html', schema: z.string() } },
      },
      async handler(request): Promise<PlatformResponse> {
        // The page's links are relative to `{admin}/console`; with a trailing slash they would miss.
        if (request.path.endsWith('/')) return { status: 308, headers: { location: '../console' }, body: '' };
        return {
          status: 200,
          headers: {
            ...SECURITY_HEADERS,
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'no-store',
            'content-security-policy': CONSOLE_CSP,
            'x-frame-options': 'DENY',
          },
          body,
        };
      },
    },
    {
      method: 'GET',
      path: `${basePath}/console/assets/:name`,
      formatError: adminErrorEnvelope,
      doc: {
        operationId: 'admin_console_asset',
        summary: "A script or stylesheet of the operator console, named by its content's digest",
        tag: 'admin',
        responses: {
          200: { description: 'The file', contentType: 'text/javascript', schema: z.string() },
          304: { description: 'The copy named in If-None-Match is current' },
          404: { description: 'No such file' },
        },
      },
      async handler(request, { name }) {
        const asset = byName.get(name!);
        if (!asset) throw new NotFoundError('The operator console has no such file');
        return assetResponse(asset, header(request, 'if-none-match'));
      },
    },
  ];
}
