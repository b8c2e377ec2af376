/**
 * `courier-platform --version`: the version of the installed package, read from its package.json
 * at run time, so the bin reports what npm installed whichever build (or the source) runs.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

const NAME = 'courier-platform';

/** The package.json above `entry` (the running bin: `dist/cli.js`, or `src/cli/index.ts` from the repository) that is this package's. */
export function packageVersion(entry: string): string | undefined {
  let dir = dirname(realpathSync(entry));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === NAME && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here (or not one we can read): look further up.
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
