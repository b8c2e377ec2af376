/**
 * The layers of src/ and adapters/ (.dependency-cruiser.cjs, CONTRIBUTING.md's Layout): the core
 * imports no feature folder, each folder imports only what its place allows, adapters only
 * translate, src/ never names a host framework, and no import cycle, type-only imports included.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Resolving every import of ~200 files through the TypeScript compiler takes seconds on a busy machine. */
const CRUISE_TIMEOUT_MS = 60_000;

async function cruiseFolders(baseDir: string, folders: string[], options: ICruiseOptions, tsConfigFile?: string): Promise<ICruiseResult> {
  const transpile = tsConfigFile === undefined ? {} : { tsConfig: extractTSConfig(tsConfigFile) };
  return (await cruise(folders, { ...options, baseDir }, {}, transpile)).output as ICruiseResult;
}

/** Each violation as `rule: from -> to`, which names the file to fix. */
const violations = (result: ICruiseResult): string[] => result.summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`);

describe('the layers', () => {
  it('src/ and adapters/ keep them', { timeout: CRUISE_TIMEOUT_MS }, async () => {
    const options = await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'));
    const tsConfig = join(root, 'tsconfig.json');
    const result = await cruiseFolders(root, ['src', 'adapters'], { ...options, tsConfig: { fileName: tsConfig } }, tsConfig);
    // The graph is the real one: the Express adapter reaches the platform through its imports.
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    const express = result.modules.find((module) => module.source === 'adapters/express.ts');
    expect(express?.dependencies.map((dependency) => dependency.resolved)).toContain('src/platform.ts');
    expect(violations(result)).toEqual([]);
  });

  it('a breach fails: the core reaching a feature, a cycle of type imports, courier/ importing the sandbox, node:http in the core', { timeout: CRUISE_TIMEOUT_MS }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'layers-'));
    const write = (file: string, text: string) => {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    };
    try {
      write('src/core/clock.ts', "import type { Grant } from '../oauth/grant.js';\nexport interface Clock { grant?: Grant }\n");
      write('src/oauth/grant.ts', "import type { Clock } from '../core/clock.js';\nexport interface Grant { clock?: Clock }\n");
      write('src/courier/proxy.ts', "import { upstream } from '../sandbox/upstream.js';\nexport const proxy = upstream;\n");
      write('src/sandbox/upstream.ts', 'export const upstream = 1;\n');
      write('src/core/http.ts', "import type { IncomingMessage } from 'node:http';\nexport type Incoming = IncomingMessage;\n");
      const { tsConfig: _, ...options } = await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'));
      expect(violations(await cruiseFolders(dir, ['src'], options)).sort()).toEqual([
        'core-imports: src/core/clock.ts -> src/oauth/grant.ts',
        'courier-imports: src/courier/proxy.ts -> src/sandbox/upstream.ts',
        'no-circular: src/core/clock.ts -> src/oauth/grant.ts',
        'src-no-node-http: src/core/http.ts -> http',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
