/**
 * `npm pack` (and `npm publish`) on a fresh clone, where no dist/ exists yet: the package ships only
 * dist/, so packing must build it first. The lifecycle's shell is replaced by one that records
 * what npm asks it to run, which keeps the test free of a 40-second build.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'courier-platform-pack-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm pack on a fresh clone', () => {
  it('runs the build (npm run build, which is tsup) before packing', () => {
    const clone = join(work, 'clone');
    mkdirSync(clone);
    copyFileSync(join(root, 'package.json'), join(clone, 'package.json'));
    const record = join(work, 'scripts.txt');
    const shell = join(work, 'record-shell');
    writeFileSync(record, '');
    // npm runs a lifecycle script as `<shell> -c '<script>'`.
    writeFileSync(shell, '#!/bin/sh\nprintf "%s\\n" "$2" >> "$RECORD"\n');
    chmodSync(shell, 0o755);

    const out = execFileSync('npm', ['pack', '--dry-run', '--json', `--script-shell=${shell}`], {
      cwd: clone,
      encoding: 'utf8',
      env: { ...process.env, RECORD: record },
      stdio: ['ignore', 'pipe', 'pipe'],
    });

    const [packed] = JSON.parse(out) as { name: string; files: { path: string }[] }[];
    expect(packed?.name).toBe('courier-platform');
    expect(readFileSync(record, 'utf8').trim().split('\n')).toEqual(['npm run build']);
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.build).toBe('tsup');
  }, 60_000);
});
