/**
 * A readable API reference at /api-docs: Swagger UI (swagger-ui-dist, served from the installed
 * package, no CDN) reading the platform's generated OpenAPI document (docs/api-document.md).
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import express, { type Router } from 'express';

const ASSETS = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// Scripts and styles come from this origin only; Swagger UI sets inline styles and shows data: images.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

export function apiReferenceRoutes(documentPath: string): Router {
  const router = express.Router();
  router.use('/api-docs/assets', express.static(ASSETS, { index: false }));
  // The initializer is a file, not an inline script, so the page's CSP needs no 'unsafe-inline' for scripts.
  router.get('/api-docs/init.js', (_req, res) => {
    res.type('application/javascript').send(`window.ui = SwaggerUIBundle({ url: ${JSON.stringify(documentPath)}, dom_id: '#api-reference' });\n`);
  });
  router.get('/api-docs', (_req, res) => {
    res.set('content-security-policy', CSP).type('html').send(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>API reference</title>
<link rel="stylesheet" href="/api-docs/assets/swagger-ui.css"><link rel="icon" href="/api-docs/assets/favicon-32x32.png"></head>
<body><div id="api-reference"></div>
<script src="/api-docs/assets/swagger-ui-bundle.js"></script><script src="/api-docs/init.js"></script></body></html>`);
  });
  return router;
}
