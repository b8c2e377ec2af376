/**
 * The console's HTML: a skeleton the script fills in. It names its files relative to
 * `{admin}/console`, so it works under any mount path and admin base path, and tells the script
 * which parts of the admin API are on, so no screen calls a route that is not there, and the
 * largest page of applications the API gives.
 */
import { escapeHtml } from '../../oauth/pages.js';
import { MAX_CLIENT_PAGE } from '../client-list.js';
import type { ConsoleAssets } from './assets.js';

export interface ConsoleParts {
  /** The applications' routes (the OAuth server is on). */
  clients: boolean;
  /** The quota rules' routes. */
  rules: boolean;
  /** The current usage of an application. */
  usage: boolean;
}

export function consolePage(assets: ConsoleAssets, parts: ConsoleParts): string {
  const on = Object.entries(parts)
    .filter(([, value]) => value)
    .map(([name]) => name)
    .join(' ');
  const href = (name: string) => escapeHtml(`console/assets/${name}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Operator console</title>
<link rel="icon" href="data:,">
${assets.styles.map((asset) => `<link rel="stylesheet" href="${href(asset.name)}">`).join('\n')}
${assets.scripts.map((asset) => `<script src="${href(asset.name)}" defer></script>`).join('\n')}
</head>
<body data-parts="${escapeHtml(on)}" data-client-page="${MAX_CLIENT_PAGE}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<span class="brand">Operator console</span>
<nav aria-label="Screens" id="nav" hidden>
<a href="#/">Overview</a>
<a href="#/apps" data-part="clients">Applications</a>
<a href="#/rules" data-part="rules">Rules</a>
</nav>
<button type="button" id="sign-out" class="quiet" hidden>Forget token</button>
</header>
<main id="main" tabindex="-1">
<section id="sign-in" hidden aria-labelledby="sign-in-title">
<h1 id="sign-in-title">Sign in</h1>
<p>This browser has no operator session here. Give the admin token; it is kept for this tab only.</p>
<form id="sign-in-form">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="off" required>
<button type="submit">Sign in</button>
<p id="sign-in-error" class="error" role="alert"></p>
</form>
</section>
<div id="screen" aria-live="polite"></div>
</main>
<noscript><p>The operator console needs JavaScript.</p></noscript>
</body>
</html>
`;
}
