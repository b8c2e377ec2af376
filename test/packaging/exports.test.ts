import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

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

/**
 * What a consumer of each entry sees: `{ [entry]: names }`, or the load error's message. One Node
 * process per module system, each entry loaded on its own, so a broken entry fails only its test.
 */
function namesSeen(system: 'esm' | 'cjs'): Record<string, string[] | string> {
  const load =
    system === 'esm'
      ? `for (const [entry, spec] of specs) { try { seen[entry] = Object.keys(await import(spec)); } catch (error) { seen[entry] = String(error); } }`
      : `for (const [entry, spec] of specs) { try { seen[entry] = Object.keys(require(spec)); } catch (error) { seen[entry] = String(error); } }`;
  const script = `const specs = ${JSON.stringify(entries.map((entry) => [entry, specifier(entry)]))}; const seen = {}; ${load} console.log(JSON.stringify(seen));`;
  const args = system === 'esm' ? ['--input-type=module', '-e', script] : ['-e', script];
  return JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' })) as Record<string, string[] | string>;
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

  describe('consumers', () => {
    let esm: Record<string, string[] | string>;
    let cjs: Record<string, string[] | string>;
    beforeAll(() => {
      esm = namesSeen('esm');
      cjs = namesSeen('cjs');
    });

    it.each(entries)('%s: an ESM consumer imports the documented names', (entry) => {
      expect(esm[entry]).toEqual(expect.arrayContaining(EXPECTED_EXPORTS[entry]!));
    });

    it.each(entries)('%s: a CommonJS consumer requires the documented names', (entry) => {
      expect(cjs[entry]).toEqual(expect.arrayContaining(EXPECTED_EXPORTS[entry]!));
    });
  });
});
