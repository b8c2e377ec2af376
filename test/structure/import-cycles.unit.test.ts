/**
 * No import cycle in src/ or adapters/, type-only imports included: a cycle makes module
 * initialisation order matter and ties modules that should stand alone.
 *
 * The graph comes from the TypeScript compiler API (already a dev dependency): it resolves every
 * specifier exactly as the build does (NodeNext, `./x.js` naming `./x.ts`), and `import type`
 * counts like any other import.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function compilerOptions(): ts.CompilerOptions {
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  };
  return ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, host)!.options;
}

/** Each file's imports among `files` (static, re-exports, `import type`, dynamic `import()`). */
function importGraph(files: readonly string[], options: ts.CompilerOptions): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => ts.resolveModuleName(fileName, file, options, ts.sys, undefined, undefined, ts.ModuleKind.ESNext).resolvedModule?.resolvedFileName)
      .filter((target): target is string => target !== undefined && known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every cycle a depth-first walk meets, each as the files along it (first file repeated at the end). */
function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    const at = path.indexOf(file);
    if (at !== -1) return void cycles.push([...path.slice(at), file]);
    if (done.has(file)) return;
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return cycles;
}

const readable = (cycles: string[][], base: string) => cycles.map((cycle) => cycle.map((file) => relative(base, file)).join(' -> '));

describe('import cycles', () => {
  it('src/ and adapters/ have none', () => {
    const files = ts.sys
      .readDirectory(root, ['.ts'], undefined, ['src/**/*', 'adapters/**/*'])
      .filter((file) => !file.endsWith('.d.ts'));
    expect(files.length).toBeGreaterThan(50);
    const graph = importGraph(files, compilerOptions());
    // The graph is the real one: the Express adapter reaches the platform through its imports.
    expect(graph.get(join(root, 'adapters/express.ts'))).toContain(join(root, 'src/platform.ts'));
    expect(readable(findCycles(graph), root)).toEqual([]);
  });

  it('finds a cycle made only of type imports', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cycles-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b?: B }\n");
      writeFileSync(join(dir, 'b.ts'), "import type { A } from './a.js';\nexport interface B { a?: A }\n");
      writeFileSync(join(dir, 'c.ts'), "export { type A } from './a.js';\n");
      const files = ['a.ts', 'b.ts', 'c.ts'].map((name) => join(dir, name));
      expect(readable(findCycles(importGraph(files, compilerOptions())), dir)).toEqual(['a.ts -> b.ts -> a.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
