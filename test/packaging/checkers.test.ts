/**
 * The packed tarball passes the ecosystem's package checkers: publint in strict mode, and
 * Are the Types Wrong in every TypeScript resolution mode (node10, node16 from CJS and ESM,
 * bundler) for every entry. Runs against dist/, which `npm test` builds before vitest starts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);

function run(command: string, args: string[]): { status: number | null; stdout: string; output: string } {
  // Scripts off: attw packs with npm, whose prepack would rebuild dist/ under the other test files.
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', npm_config_ignore_scripts: 'true' }, timeout: 90_000 });
  return { status: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}` };
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
});

describe('package checkers', () => {
  it('publint --strict: no error, warning or suggestion', async () => {
    const { messages } = await publint({ pkgDir: root, strict: true, level: 'suggestion' });
    expect(messages).toEqual([]);
  });

  it('attw --pack: every entry resolves with types in every resolution mode', { timeout: 120_000 }, () => {
    const attwPackage = require.resolve('@arethetypeswrong/cli/package.json');
    const bin = join(dirname(attwPackage), (require(attwPackage) as { bin: { attw: string } }).bin.attw);
    const { status, output } = run(process.execPath, [bin, '--pack', '.', '--format', 'ascii', '--no-emoji']);
    expect(output).toMatch(/No problems found/);
    expect(status, output).toBe(0);
  });

  it('the tarball holds dist/ without source maps, the README and package.json', () => {
    const { status, stdout, output } = run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts']);
    expect(status, output).toBe(0);
    const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
    const paths = packed!.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts']));
    // dist/assets/ holds the operator console's script and stylesheet (docs/operator.md#console).
    expect(paths.filter((path) => !/^(dist\/[^/]+\.(js|cjs|d\.ts|d\.cts)|dist\/assets\/[^/]+\.(js|css)|package\.json|README\.md|LICENSE)$/.test(path))).toEqual([]);
  });
});
