/**
 * A readable API reference at /api-docs: Swagger UI (swagger-ui-dist, served from the installed
 * package, no CDN) reading the platform's generated OpenAPI document (docs/api-document.md).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { answer, type SiteAnswer } from './http.js';

const ASSETS = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files of swagger-ui-dist the page loads, and what they are. */
const ASSET_TYPES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

// Scripts and styles come from this origin only; Swagger UI sets inline styles and shows data: images.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface ApiReference {
  /** GET /api-docs */
  page(): SiteAnswer;
  /** GET /api-docs/init.js */
  init(): SiteAnswer;
  /** The names of the files under /api-docs/assets/. */
  assets: string[];
  /** GET /api-docs/assets/<name> */
  asset(name: string): Promise<SiteAnswer>;
}

export function createApiReference(documentPath: string): ApiReference {
  return {
    page: () =>
      answer(
        200,
        `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>API reference</title>
<link rel="stylesheet" href="/api-docs/assets/swagger-ui.css"><link rel="icon" href="/api-docs/assets/favicon-32x32.png"></head>
<body><div id="api-reference"></div>
<script src="/api-docs/assets/swagger-ui-bundle.js"></script><script src="/api-docs/init.js"></script></body></html>`,
        { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP },
      ),
    // The initializer is a file, not an inline script, so the page's CSP needs no 'unsafe-inline' for scripts.
    init: () =>
      answer(200, `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(documentPath)}, dom_id: '#api-reference' });\n`, {
        'content-type': 'application/javascript; charset=utf-8',
      }),
    assets: Object.keys(ASSET_TYPES),
    asset: async (name) => answer(200, new Uint8Array(await readFile(join(ASSETS, name))), { 'content-type': ASSET_TYPES[name]! }),
  };
}
