/**
 * Type-checks documentation snippets with the TypeScript compiler API, with the repository's own
 * compiler options: `courier-platform` and its subpaths resolve to the sources through
 * tsconfig.json's `paths`, exactly as they do for examples/.
 */
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import type { Snippet } from './markdown.js';

/**
 * What the snippets' folder gets as tsconfig.json: every file is a module of its own (a snippet
 * need not import anything), and a snippet may declare what it does not use. Decorators are
 * NestJS's, as every NestJS project compiles them (its controllers' `@Req()` is a parameter
 * decorator, which only these allow; docs/hosts.md says so): the NestJS recipes are checked as
 * their readers build them.
 */
function writeConfig(dir: string, root: string): string {
  const path = join(dir, 'tsconfig.json');
  const config = {
    extends: relative(dir, join(root, 'tsconfig.json')),
    compilerOptions: {
      moduleDetection: 'force',
      noUnusedLocals: false,
      noUnusedParameters: false,
      noEmit: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
    },
    include: ['*.ts'],
    // The repository's own config leaves test/artifacts/ out of the project; here it is the project.
    exclude: [],
  };
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}

function render(diagnostic: ts.Diagnostic, where: string): string {
  return `${where}: TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
}

/**
 * Writes each snippet to `dir` (named after its file and line) and type-checks them together.
 * Answers one line per problem, `README.md:42: TS2304: Cannot find name 'app'.`; empty when all pass.
 */
export function typeCheckSnippets(snippets: readonly Snippet[], dir: string, root: string): string[] {
  const byPath = new Map<string, Snippet>();
  for (const snippet of snippets) {
    const path = join(dir, `${snippet.file.replace(/[^A-Za-z0-9]+/g, '_')}_L${snippet.line}.ts`);
    writeFileSync(path, `${snippet.code}\n`);
    byPath.set(path, snippet);
  }
  const configPath = writeConfig(dir, root);
  const problems: string[] = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => problems.push(render(diagnostic, 'tsconfig.json')),
  });
  if (!parsed) return problems;
  problems.push(...parsed.errors.map((diagnostic) => render(diagnostic, 'tsconfig.json')));

  const program = ts.createProgram({ rootNames: [...byPath.keys()], options: parsed.options });
  problems.push(...[...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map((d) => render(d, 'compiler options')));
  for (const [path, snippet] of byPath) {
    const source = program.getSourceFile(path);
    if (!source) {
      problems.push(`${snippet.file}:${snippet.line}: the compiler did not load the snippet`);
      continue;
    }
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      problems.push(render(diagnostic, `${snippet.file}:${snippet.line + line}`));
    }
  }
  return problems;
}
