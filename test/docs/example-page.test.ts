/**
 * docs/example.md against the example it describes: every address in its table is served, every
 * page the example declares is in the table, and the environment table lists exactly the
 * variables the example reads.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../examples/config.js';
import { readHostChoice } from '../../examples/hosts/choice.js';
import { createSite } from '../../examples/site.js';
import { startExample, type RunningExample } from '../examples/support.js';

const page = readFileSync(fileURLToPath(new URL('../../docs/example.md', import.meta.url)), 'utf8');

/** The first cell of each row of the table under the line that starts with `header`. */
function firstCells(header: string): string[] {
  const lines = page.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  expect(start, `a table headed ${header}`).toBeGreaterThan(-1);
  const cells: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    cells.push(line.split('|')[1]!.trim());
  }
  return cells;
}

/** `GET /openapi/v1/ping` -> GET and the path; `/login` -> GET. */
const documentedPaths = firstCells('| path |').map((cell) => {
  const [first, second] = cell.replaceAll('`', '').split(' ');
  return second === undefined ? { method: 'GET', path: first! } : { method: first!, path: second };
});

describe('docs/example.md', () => {
  let example: RunningExample;
  let base: string;
  beforeAll(async () => {
    example = await startExample({ ADMIN_TOKEN: 'a'.repeat(32) });
    base = example.base;
  });
  afterAll(() => example?.close());

  it('lists exactly the environment variables the example reads', () => {
    const read = new Set<string>();
    const reader = new Proxy({}, { get: (_, name) => void read.add(String(name)) });
    readConfig(reader);
    readHostChoice(reader);
    const documented = firstCells('| variable |').flatMap((cell) => cell.replaceAll('`', '').split(' / '));
    expect(documented.sort()).toEqual([...read].sort());
  });

  it('names every page the example declares', async () => {
    const site = await createSite(readConfig({ COURIER_UPSTREAM_URL: 'http://127.0.0.1:9' }));
    await site.close();
    // The assets of /api-docs are its files, which the page names as /api-docs/assets/*.
    const declared = site.routes.filter((route) => !route.path.startsWith('/api-docs/assets/'));
    expect(declared.length).toBeGreaterThan(5);
    for (const route of declared) {
      const named = page.includes(`\`${route.path}\``) || page.includes(`\`${route.method} ${route.path}\``);
      expect(named, `${route.method} ${route.path} is in docs/example.md`).toBe(true);
    }
  });

  it.each(documentedPaths.filter(({ path }) => !path.endsWith('*')))('$method $path is served', async ({ method, path }) => {
    const res = await fetch(`${base}${path}`, { method, redirect: 'manual', headers: { origin: base } });
    const text = await res.text();
    expect(res.status, `${method} ${path}: ${text.slice(0, 200)}`).not.toBe(404);
    expect(res.status, `${method} ${path}: ${text.slice(0, 200)}`).toBeLessThan(500);
    expect(text).not.toContain('Nothing here');
  });

  it('answers any other address with the 404 page it describes', async () => {
    const res = await fetch(`${base}/show-code?code=x`);
    expect(res.status).toBe(404);
    expect(page).toContain('"Nothing\n   here"');
    expect(await res.text()).toContain('Nothing here');
  });
});
