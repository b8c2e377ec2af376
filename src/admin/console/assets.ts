/**
 * The console's static files (docs/operator.md#console): its own scripts and stylesheet, kept
 * beside this module (`assets/`, copied to `dist/assets/` by the build), and uPlot's, from the
 * `uplot` dependency. All are read once, when the admin API is built, so a file missing from an
 * installation fails at start rather than at the first page view.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configurationError } from '../../core/errors.js';

export interface ConsoleAsset {
  /** The name in the URL, with a digest of the content, so a cached copy is never stale. */
  name: string;
  contentType: string;
  body: string;
  etag: string;
}

/** In the order the page loads them: uPlot first, then the console's own, each after what it uses. */
export interface ConsoleAssets {
  styles: readonly ConsoleAsset[];
  scripts: readonly ConsoleAsset[];
}

const CONTENT_TYPES: Readonly<Record<string, string>> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** What to do about a console file that cannot be read, by why it cannot. */
function unreadable(file: string, error: unknown): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  // Deno answers a read without --allow-read with NotCapable (PermissionDenied before Deno 2).
  if (code === 'EACCES' || code === 'EPERM' || name === 'NotCapable' || name === 'PermissionDenied') {
    return `the operator console's file ${file} cannot be read: the runtime denies reading it (on Deno, add --allow-read)`;
  }
  // A bundler that packs courier-platform into its output leaves the files behind (docs/hosts.md).
  return `the operator console's file ${file} cannot be read: keep courier-platform out of any bundle (Next.js: serverExternalPackages: ['courier-platform'] in next.config, docs/hosts.md), or reinstall the package`;
}

function asset(file: string, stem: string): ConsoleAsset {
  let body: string;
  try {
    body = readFileSync(file, 'utf8');
  } catch (error) {
    throw configurationError('invalid_option', 'admin', unreadable(file, error), error);
  }
  const extension = extname(file);
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { name: `${stem}.${digest}${extension}`, contentType: CONTENT_TYPES[extension]!, body, etag: `"${digest}"` };
}

let loaded: ConsoleAssets | undefined;

export function consoleAssets(): ConsoleAssets {
  if (loaded) return loaded;
  const own = (file: string) => asset(fileURLToPath(new URL(`./assets/${file}`, import.meta.url)), basename(file, extname(file)));
  // An unresolvable uPlot keeps its package path, which asset() then reports as unreadable.
  const uplot = (file: string) => {
    let path = `uplot/dist/${file}`;
    try {
      // A bundler may put its own module ids in place of require.resolve's paths.
      const resolved: unknown = createRequire(import.meta.url).resolve(path);
      if (typeof resolved === 'string') path = resolved;
    } catch {
      // reported by asset()
    }
    return asset(path, 'uplot');
  };
  loaded = {
    styles: [uplot('uPlot.min.css'), own('console.css')],
    scripts: [uplot('uPlot.iife.min.js'), own('kit.js'), own('charts.js'), own('apps.js'), own('console.js')],
  };
  return loaded;
}
