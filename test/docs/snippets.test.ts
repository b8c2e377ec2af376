/**
 * The documentation's code works. Every ```ts block of README.md and docs/*.md is type-checked
 * against the sources (a block marked `<!-- snippet: no-check -->` is skipped), and the README's
 * quick starts (marked `<!-- snippet: quick-start -->`) are run as a user runs them after pasting:
 * `npx tsx server.ts`, then `curl /courier/get_express_type`; and on a port that is taken, they
 * stop with the error rather than report that they listen; the Express one on Express 4 as well.
 * What they import, the README's install lines name.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort, listenOnLoopback } from '../support/net.js';
import { extractSnippets, isTypeScript, type Snippet } from './markdown.js';
import { typeCheckSnippets } from './type-check.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Under test/artifacts/, which git ignores. */
const OUT = join(ROOT, 'test/artifacts/snippets');

function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

const snippets = documents().flatMap((file) => extractSnippets(file, readFileSync(join(ROOT, file), 'utf8')));
const typescript = snippets.filter(isTypeScript);
const quickStarts = typescript.filter((snippet) => snippet.marks.includes('quick-start'));

const FRAMEWORKS = ['express', 'koa', 'connect', 'fastify', 'hono'] as const;
function frameworkOf(snippet: Snippet): string | undefined {
  return FRAMEWORKS.find((name) => snippet.code.includes(`from 'courier-platform/${name}'`));
}

/**
 * What runs: each quick start as pasted, and the Express one also on Express 4 (the devDependency
 * `express4`), which the README promises too and which reports a failed listen differently.
 */
const quickStartRuns: (readonly [string, string])[] = quickStarts.flatMap((snippet) => {
  const framework = frameworkOf(snippet) ?? 'unknown';
  const runs: (readonly [string, string])[] = [[framework, snippet.code]];
  if (framework === 'express') runs.push(['express4', snippet.code.replace("from 'express';", "from 'express4';")]);
  return runs;
});

describe('extracting code blocks from Markdown', () => {
  const markdown = [
    '# Title', // 1
    '', // 2
    '<!-- snippet: quick-start -->', // 3
    '', // 4
    '```ts', // 5
    "const a = 1;", // 6
    '```', // 7
    '```sh', // 8
    'npm test', // 9
    '```', // 10
    '<!-- snippet: no-check -->', // 11
    'Text in between.', // 12
    '````typescript', // 13
    '```', // 14
    '````', // 15
  ].join('\n');

  it('finds every fenced block with its language and the line of its first code line', () => {
    const found = extractSnippets('x.md', markdown);
    expect(found.map(({ line, language, code }) => ({ line, language, code }))).toEqual([
      { line: 6, language: 'ts', code: 'const a = 1;' },
      { line: 9, language: 'sh', code: 'npm test' },
      { line: 14, language: 'typescript', code: '```' },
    ]);
    expect(found.filter(isTypeScript)).toHaveLength(2);
  });

  it('reads the marks of the comment on the closest non-blank line above the fence, and only that', () => {
    expect(extractSnippets('x.md', markdown).map((snippet) => snippet.marks)).toEqual([['quick-start'], [], []]);
  });
});

describe('the documentation', () => {
  it('the README holds one quick start per framework, and the docs hold TypeScript to check', () => {
    expect(quickStarts.map(frameworkOf).sort()).toEqual(['connect', 'express', 'fastify', 'hono', 'koa']);
    expect(quickStarts.every((snippet) => snippet.file === 'README.md')).toBe(true);
    expect(typescript.filter((snippet) => snippet.file.startsWith('docs/')).length).toBeGreaterThan(10);
    expect(quickStartRuns.find(([framework]) => framework === 'express4')?.[1]).toContain("from 'express4';");
  });
});

// Each quick start is a process of its own on a port of its own, most of its time spent starting:
// they run at once (up to vitest's maxConcurrency), alongside the type-check, which holds the
// event loop while it runs (every test here has a timeout that allows for it).
describe('documentation snippets', { concurrent: true }, () => {
  beforeAll(() => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
  });

  it('every TypeScript block type-checks against the sources', () => {
    const checked = typescript.filter((snippet) => !snippet.marks.includes('no-check'));
    expect(typeCheckSnippets(checked, OUT, ROOT)).toEqual([]);
  }, 240_000);

  it("names every package a quick start imports in the README's install lines", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const install = extractSnippets('README.md', readme).find((snippet) => snippet.language === 'sh' && snippet.code.includes('npm install courier-platform'));
    const installed = new Set((install?.code ?? '').split('\n').flatMap((line) => line.replace(/^npm install\s+/, '').split(/[\s,:;]+/)));
    const imported = quickStarts.flatMap((snippet) => [...snippet.code.matchAll(/from '([^']+)'/g)].map((match) => match[1] as string));
    const packages = [...new Set(imported.filter((name) => !name.startsWith('node:') && !name.startsWith('courier-platform')))];
    expect(packages.length).toBeGreaterThan(4);
    expect(packages.filter((name) => !installed.has(name))).toEqual([]);
  });

  describe.each(quickStartRuns)('the %s quick start', (framework, code) => {
    it('starts, and answers GET /courier/get_express_type with HTTP 200 and code 0', async () => {
      const script = join(OUT, `quick-start-${framework}.ts`);
      writeFileSync(script, `${code}\n`);
      const { status, body } = await runAndRequest(script, '/courier/get_express_type');
      expect(status).toBe(200);
      expect(body).toMatchObject({ code: 0, message: 'ok' });
      expect((body as { data: unknown[] }).data.length).toBeGreaterThan(0);
    }, 90_000);

    it('on a port already taken, exits with a non-zero code and the EADDRINUSE error', async () => {
      const script = join(OUT, `quick-start-${framework}-busy.ts`);
      writeFileSync(script, `${code}\n`);
      const taken = createServer();
      const port = await listenOnLoopback(taken);
      try {
        const { code, output } = await runToExit(script, port);
        expect(output).toContain(`EADDRINUSE: address already in use 127.0.0.1:${port}`);
        expect(output).not.toContain('listening on');
        expect(code).not.toBe(0);
      } finally {
        taken.close();
      }
    }, 90_000);
  });
});

describe('docs/signing.md', () => {
  it('shows the test vectors exactly as test/fixtures/signing-vectors.json holds them', () => {
    const page = readFileSync(join(ROOT, 'docs/signing.md'), 'utf8');
    const vectors = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/signing-vectors.json'), 'utf8')) as Record<string, string>[];
    for (const vector of vectors) {
      for (const key of ['canonical', 'md5', 'hmac-sha256']) expect(page, `${vector.name}: ${key}`).toContain(vector[key]);
    }
  });
});

/** Runs `script` with tsx on `port` until it exits by itself; its exit code and what it printed. */
async function runToExit(script: string, port: number, timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const kill = () => child.kill('SIGKILL');
  const timer = setTimeout(kill, timeoutMs);
  process.once('exit', kill);
  try {
    const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
    if (child.signalCode === 'SIGKILL') throw new Error(`still running after ${timeoutMs} ms; its output:\n${output}`);
    return { code, output };
  } finally {
    clearTimeout(timer);
    process.removeListener('exit', kill);
  }
}

/**
 * Runs `script` with tsx on a free port (the quick starts read PORT), requests `path` once it
 * says it listens, and stops the process whatever happens. Another test's server may take the
 * port between freePort() and the listen: the quick start then exits on EADDRINUSE, and it runs
 * again on another port.
 */
async function runAndRequest(script: string, path: string, timeoutMs = 60_000): Promise<{ status: number; body: unknown }> {
  for (let tries = 1; ; tries++) {
    try {
      return await runOnce(script, path, timeoutMs);
    } catch (error) {
      if (!(error instanceof PortTaken) || tries === 3) throw error;
    }
  }
}

class PortTaken extends Error {}

async function runOnce(script: string, path: string, timeoutMs: number): Promise<{ status: number; body: unknown }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) {
        if (output.includes('EADDRINUSE')) throw new PortTaken(output);
        throw new Error(`the quick start exited with code ${child.exitCode}; its output:\n${output}`);
      }
      // Only the quick start's own answer counts, not another server's on a port it lost.
      if (!output.includes(`listening on http://localhost:${port}`)) {
        if (Date.now() > deadline) throw new Error(`not listening within ${timeoutMs} ms; its output:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      let response: Response;
      try {
        response = await fetch(`http://127.0.0.1:${port}${path}`);
      } catch (error) {
        // Not listening yet.
        if (Date.now() > deadline) throw new Error(`no answer within ${timeoutMs} ms (${String(error)}); its output:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      const text = await response.text();
      try {
        return { status: response.status, body: JSON.parse(text) as unknown };
      } catch {
        throw new Error(`HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(kill, 5_000);
      await exited;
      clearTimeout(killer);
    }
    process.removeListener('exit', kill);
  }
}
