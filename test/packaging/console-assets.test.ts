/**
 * The built package serves the operator console (docs/operator.md#console): dist/ carries the
 * console's files beside the bundle, ESM and CommonJS consumers serve the page and every file it
 * names, and an installation missing one fails when the platform is built, not at the first view.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// Runs against dist/, which `npm test` builds before vitest starts.
const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'courier-platform-console-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A host on a free port that fetches the console and each file the page names; prints `path status` lines. */
const consumer = (load: string) => `
${load}
const app = express();
app.use(courierPlatform({ courier: false, oauth: false, quota: false, admin: { token: 'x'.repeat(32) } }));
const server = app.listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port + '/admin/';
  const page = await fetch(base + 'console');
  const lines = ['console ' + page.status];
  const html = await page.text();
  for (const [, file] of html.matchAll(/(?:src|href)="(console\\/assets\\/[^"]+)"/g)) lines.push(file + ' ' + (await fetch(base + file)).status);
  console.log(lines.join('\\n'));
  server.close();
});
`;

function run(file: string, source: string, cwd = root): string {
  const path = join(work, file);
  writeFileSync(path, source);
  return execFileSync(process.execPath, [path], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function expectServed(output: string): void {
  const lines = output.trim().split('\n');
  expect(lines[0]).toBe('console 200');
  expect(lines.slice(1)).toHaveLength(7);
  for (const line of lines.slice(1)) expect(line).toMatch(/^console\/assets\/[a-z]+\.[0-9a-f]{16}\.(?:js|css) 200$/);
}

describe('the operator console in the built package', () => {
  it("dist/ carries the console's own files", () => {
    expect(readdirSync(join(root, 'dist/assets')).sort()).toEqual(readdirSync(join(root, 'src/admin/console/assets')).sort());
  });

  it('an ESM consumer serves the page and every file it names', () => {
    const load = `import express from 'express';\nimport { courierPlatform } from 'courier-platform/express';`;
    // The consumer lives outside the repository, so it names the package by its path.
    expectServed(run('esm.mjs', consumer(load).replace("'courier-platform/express'", JSON.stringify(join(root, 'dist/express.js'))).replace("'express'", JSON.stringify(import.meta.resolve('express')))));
  });

  it('a CommonJS consumer serves the page and every file it names', () => {
    const load = `const express = require(${JSON.stringify(fileURLToPath(import.meta.resolve('express')))});\nconst { courierPlatform } = require(${JSON.stringify(join(root, 'dist/express.cjs'))});`;
    expectServed(run('cjs.cjs', consumer(load)));
  });

  it('without its files, the platform refuses to start, naming what is missing', () => {
    const copy = join(work, 'broken');
    cpSync(join(root, 'dist'), join(copy, 'dist'), { recursive: true, filter: (source) => !source.includes(`${join(root, 'dist/assets')}`) });
    cpSync(join(root, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
    expect(existsSync(join(copy, 'dist/assets'))).toBe(false);
    const output = run(
      'broken.cjs',
      `const { courierPlatform } = require(${JSON.stringify(join(copy, 'dist/express.cjs'))});
try {
  courierPlatform({ courier: false, oauth: false, quota: false, admin: { token: 'x'.repeat(32) } });
  console.log('started');
} catch (error) {
  console.log(error.name + ' ' + error.field + ': ' + error.message);
}`,
    );
    expect(output).toMatch(/^ConfigurationError admin: .*operator console's file \S*\/dist\/assets\/[a-z]+\.(?:js|css) cannot be read: keep courier-platform out of any bundle \(Next.js: serverExternalPackages: \['courier-platform'\] in next.config, docs\/hosts.md\), or reinstall the package$/m);
  });
});
