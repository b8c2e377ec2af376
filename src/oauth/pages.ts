import type { PlatformResponse } from '../core/http.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const STYLE = `
body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2430;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;border-radius:12px;box-shadow:0 2px 12px #0002;padding:2rem 2.25rem;max-width:28rem;width:100%}
h1{font-size:1.3rem;margin:0 0 1rem}ul{padding-left:1.2rem}li{margin:.35rem 0}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}button{flex:1;font-size:1rem;padding:.65rem;border-radius:8px;border:1px solid #c6ccd6;background:#fff;cursor:pointer}
button[value=approve]{background:#2456d3;border-color:#2456d3;color:#fff}.muted{color:#5b6475;font-size:.9rem}code{word-break:break-all}`;

/** Pages of the authorization server are never framed, cached or given a referrer. */
function page(status: number, title: string, body: string, formAction = "'none'", extraHeaders: Record<string, string> = {}): PlatformResponse {
  return {
    status,
    headers: {
      ...extraHeaders,
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`,
  };
}

/**
 * Shown instead of a redirect when the client or its redirect_uri cannot be trusted, and when
 * the server itself failed. `headers` adds e.g. Retry-After; the page's own security headers win.
 */
export function errorPage(status: number, error: string, description: string, headers: Record<string, string> = {}): PlatformResponse {
  return page(
    status,
    'Authorization error',
    `<h1>This sign-in request cannot be completed</h1><p>${escapeHtml(description)}</p><p class="muted">Error: <code>${escapeHtml(error)}</code>. Go back to the application you came from and try again.</p>`,
    "'none'",
    headers,
  );
}

export interface ConsentView {
  action: string;
  clientName: string;
  userLabel: string;
  scopes: { name: string; description: string }[];
  transaction: string;
  /** Origins the form may lead to: this server, then the client's redirect target. */
  formTargets: string[];
}

export function consentPage(view: ConsentView): PlatformResponse {
  const items = view.scopes.map((s) => `<li>${escapeHtml(s.description)} <span class="muted">(${escapeHtml(s.name)})</span></li>`).join('');
  return page(
    200,
    `Allow ${view.clientName}?`,
    `<h1><strong>${escapeHtml(view.clientName)}</strong> wants to access your account</h1>
<p class="muted">Signed in as ${escapeHtml(view.userLabel)}</p>
<p>It asks to:</p><ul>${items}</ul>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="transaction" value="${escapeHtml(view.transaction)}">
<div class="actions"><button type="submit" name="decision" value="deny">Deny</button><button type="submit" name="decision" value="approve">Approve</button></div>
</form>`,
    view.formTargets.join(' '),
  );
}
