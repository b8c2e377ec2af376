/**
 * The host's HTML pages: one small stylesheet, escaping, the headers every page sends, and the
 * pages for a wrong address or a request that failed (never a stack trace: that goes to the log).
 */
import { STATUS_CODES } from 'node:http';
import { answer, type SiteAnswer } from './http.js';

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2430;margin:0;padding:2rem 1rem}
main{background:#fff;border-radius:12px;box-shadow:0 2px 12px #0002;padding:2rem 2.25rem;max-width:40rem;margin:0 auto}
main.narrow{max-width:22rem}h1{font-size:1.3rem;margin:0 0 1rem}h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
form{display:grid;gap:.6rem}form.inline{display:flex;align-items:center;gap:.75rem}label{display:grid;gap:.25rem}input,button{font-size:1rem;padding:.5rem;border-radius:6px;border:1px solid #c6ccd6}
button{background:#2456d3;border-color:#2456d3;color:#fff;cursor:pointer}.error{color:#b00020}.muted{color:#5b6475;font-size:.9rem}
pre{background:#f3f4f6;padding:.75rem;border-radius:6px;overflow:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse}td,th{padding:.25rem .75rem .25rem 0;text-align:left}`;

const HTML = 'text/html; charset=utf-8';

function renderPage(title: string, body: string, options: { narrow?: boolean } = {}): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main${options.narrow ? ' class="narrow"' : ''}>${body}</main></body></html>`;
}

export function page(status: number, title: string, body: string, options: { narrow?: boolean; cookies?: string[]; headers?: Record<string, string> } = {}): SiteAnswer {
  return answer(status, renderPage(title, body, options), { 'content-type': HTML, ...options.headers }, options.cookies);
}

/**
 * The headers of the platform's own consent page, for every page of the host: no scripts, no
 * framing (clickjacking), no referrer (tokens and codes in URLs stay here), no MIME sniffing,
 * no caching (pages carry form tokens and access tokens). Forms may only post to this site.
 * Each host sets them on its own pages, after the platform and the guarded API.
 */
export function securityHeaders(publicOrigin: string): Record<string, string> {
  return {
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${publicOrigin}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

const HOME = '<p><a href="/">Back to the start page</a></p>';

export const notFoundPage = (): SiteAnswer => page(404, 'Not found', `<h1>Nothing here</h1><p>This address does not exist on this site.</p>${HOME}`);

/** What a visitor reads for the 4xx errors of reading a form. */
const EXPLAINED: Record<number, string> = {
  400: 'The form could not be read. Reload the page and send it again.',
  413: 'The form is larger than this site accepts.',
  415: 'This form was sent in an encoding this site does not read.',
};

/** A plain page for a client's mistake, with a way back. */
export function clientErrorPage(status: number): SiteAnswer {
  const title = STATUS_CODES[status] ?? 'Bad request';
  return page(status, title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(EXPLAINED[status] ?? 'The request could not be handled.')}</p>${HOME}`);
}

/**
 * The host's last resort, for an error a handler or the framework threw: the 4xx page the error
 * carries (a framework's own refusal of a request), or a plain 500 page. The log gets the
 * details: a one-line warning for a client's mistake, the error with its stack for a fault of
 * the server; the visitor never sees either.
 */
export function errorPage(method: string, path: string, error: unknown): SiteAnswer {
  const { status, statusCode, message } = (error ?? {}) as { status?: unknown; statusCode?: unknown; message?: unknown };
  const carried = typeof status === 'number' ? status : statusCode;
  if (typeof carried === 'number' && carried >= 400 && carried < 500) {
    console.warn(`${method} ${path} answered ${carried}: ${String(message)}`);
    return clientErrorPage(carried);
  }
  console.error(`${method} ${path} failed:`, error);
  return page(500, 'Something went wrong', `<h1>Something went wrong</h1><p>The server could not answer this request; its log has the details.</p>${HOME}`);
}
