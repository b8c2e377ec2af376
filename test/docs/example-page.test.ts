/**
 * docs/example.md against the example it describes: every address in its table is served, every
 * page the example declares is in the table, and the environment table lists exactly the
 * variables the example reads.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExampleApp, type ExampleApp } from '../../examples/app.js';
import { readConfig } from '../../examples/config.js';
import { listenOnLoopback } from '../support/net.js';

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

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** The routes the example declares, its routers' included (all mounted at the root). */
function declaredRoutes(stack: Layer[]): { method: string; path: string }[] {
  return stack.flatMap((layer) => {
    if (layer.route) return Object.keys(layer.route.methods).map((method) => ({ method: method.toUpperCase(), path: layer.route!.path }));
    return layer.handle?.stack ? declaredRoutes(layer.handle.stack) : [];
  });
}

describe('docs/example.md', () => {
  let example: ExampleApp;
  let base: string;
  const server = createServer();
  beforeAll(async () => {
    const port = await listenOnLoopback(server);
    base = `http://127.0.0.1:${port}`;
    example = await createExampleApp(readConfig({ HOST: '127.0.0.1', PORT: String(port), ADMIN_TOKEN: 'a'.repeat(32) }));
    await example.platform.platform.ready();
    server.on('request', example.app);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await example?.close();
  });

  it('lists exactly the environment variables the example reads', () => {
    const read = new Set<string>();
    readConfig(new Proxy({}, { get: (_, name) => void read.add(String(name)) }));
    const documented = firstCells('| variable |').flatMap((cell) => cell.replaceAll('`', '').split(' / '));
    expect(documented.sort()).toEqual([...read].sort());
  });

  it('names every page the example declares', () => {
    const stack = (example.app as Express & { router: { stack: Layer[] } }).router.stack;
    const declared = declaredRoutes(stack);
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
