/**
 * The console's static files (docs/operator.md#console): its own script and stylesheet, kept
 * beside this module (`assets/`, copied to `dist/assets/` by the build), and uPlot's, from the
 * `uplot` dependency. All are read once, when the admin API is built, so a file missing from an
 * installation fails at start rather than at the first page view.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { configurationError } from '../../core/errors.js';

export interface ConsoleAsset {
  /** The name in the URL, with a digest of the content, so a cached copy is never stale. */
  name: string;
  contentType: string;
  body: string;
  etag: string;
}

export interface ConsoleAssets {
  script: ConsoleAsset;
  style: ConsoleAsset;
  chartScript: ConsoleAsset;
  chartStyle: ConsoleAsset;
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

function asset(file: string, stem: string, extension: 'js' | 'css'): ConsoleAsset {
  let body: string;
  try {
    body = readFileSync(file, 'utf8');
  } catch (error) {
    throw configurationError('invalid_option', 'admin', `the operator console's file ${file} cannot be read; reinstall the package`, error);
  }
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { name: `${stem}.${digest}.${extension}`, contentType: extension === 'js' ? JS : CSS, body, etag: `"${digest}"` };
}

let loaded: ConsoleAssets | undefined;

export function consoleAssets(): ConsoleAssets {
  if (loaded) return loaded;
  const own = (file: string) => fileURLToPath(new URL(`./assets/${file}`, import.meta.url));
  // An unresolvable uPlot keeps its package path, which asset() then reports as unreadable.
  const uplot = (file: string) => {
    try {
      return createRequire(import.meta.url).resolve(`uplot/dist/${file}`);
    } catch {
      return `uplot/dist/${file}`;
    }
  };
  loaded = {
    script: asset(own('console.js'), 'console', 'js'),
    style: asset(own('console.css'), 'console', 'css'),
    chartScript: asset(uplot('uPlot.iife.min.js'), 'uplot', 'js'),
    chartStyle: asset(uplot('uPlot.min.css'), 'uplot', 'css'),
  };
  return loaded;
}
