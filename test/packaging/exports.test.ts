import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Runs against dist/, which `npm test` builds before vitest starts.
const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { exports: Record<string, unknown> };
const entries = Object.keys(pkg.exports).filter((key) => key !== './package.json');
const specifier = (entry: string) => (entry === '.' ? 'courier-platform' : `courier-platform/${entry.slice(2)}`);

const EXPECTED_EXPORTS: Record<string, string[]> = {
  '.': ['createPlatform', 'PlatformError', 'ConfigurationError', 'StoreUnavailableError', 'StoreFailedError', 'md5Signer', 'COURIER_OPERATION_NAMES'],
  './express': ['courierPlatform'],
  './koa': ['courierPlatform'],
  './connect': ['courierPlatform'],
  './fastify': ['courierPlatform'],
  './fetch': ['courierPlatform', 'peerAddressOf'],
  './hono': ['courierPlatform'],
  './sandbox': ['createSandbox', 'startSandbox'],
};

function run(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
}

describe('published package shape (exports map, ESM and CJS consumers)', () => {
  it('declares exactly the documented entries', () => {
    expect(entries.sort()).toEqual(Object.keys(EXPECTED_EXPORTS).sort());
  });

  it.each(entries)('%s: every file the exports map names exists in dist', (entry) => {
    const conditions = pkg.exports[entry] as Record<string, Record<string, string>>;
    for (const target of Object.values(conditions).flatMap((c) => Object.values(c))) {
      expect(existsSync(`${root}/${target}`), target).toBe(true);
    }
  });

  it.each(entries)('%s: an ESM consumer imports the documented names', (entry) => {
    const names = run(['--input-type=module', '-e', `import * as m from '${specifier(entry)}'; console.log(Object.keys(m).join(','))`]);
    expect(names.trim().split(',')).toEqual(expect.arrayContaining(EXPECTED_EXPORTS[entry]!));
  });

  it.each(entries)('%s: a CommonJS consumer requires the documented names', (entry) => {
    const names = run(['-e', `console.log(Object.keys(require('${specifier(entry)}')).join(','))`]);
    expect(names.trim().split(',')).toEqual(expect.arrayContaining(EXPECTED_EXPORTS[entry]!));
  });
});
