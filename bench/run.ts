/**
 * `npm run bench`: runs every scenario (or `--only` some), prints a markdown table per scenario
 * and writes `.bench/<scenario>.md` and `.bench/results.json`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseBenchArgs, USAGE } from './lib/args.js';
import { runPendingCleanups } from './lib/cleanup.js';
import { measureScenario, type ScenarioResult } from './lib/measure.js';
import { runInfo, scenarioMarkdown } from './lib/report.js';
import { killAllServers, REPO_ROOT } from './lib/servers.js';
import { scenarios } from './scenarios/index.js';

process.on('exit', killAllServers);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\n${signal}: stopping servers, deleting this run's Redis keys and PostgreSQL schemas\n`);
    killAllServers();
    // Bounded: each clean-up gets 5 s, then we exit whatever happened.
    void runPendingCleanups(5_000).finally(() => process.exit(130));
  });
}

/** The command as a reader would retype it. */
function commandLine(argv: string[]): string {
  const args = argv.map((arg) => (/^[\w./,=:-]+$/.test(arg) ? arg : JSON.stringify(arg))).join(' ');
  if (process.env.npm_lifecycle_event === 'bench') return args ? `npm run bench -- ${args}` : 'npm run bench';
  return `tsx bench/run.ts${args ? ` ${args}` : ''}`;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const args = parseBenchArgs(argv);
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const unknown = args.only.filter((name) => !scenarios.some((scenario) => scenario.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`);
  const selected = scenarios.filter((scenario) => (args.only.length === 0 ? !scenario.optIn : args.only.includes(scenario.name)));

  const { only: _only, help: _help, ...options } = args;
  const info = runInfo(commandLine(argv), options);
  const outDir = join(REPO_ROOT, '.bench');
  await mkdir(outDir, { recursive: true });

  const results: ScenarioResult[] = [];
  for (const scenario of selected) {
    const result = await measureScenario(scenario, options);
    results.push(result);
    const markdown = scenarioMarkdown(result, info);
    console.log(`\n${markdown}`);
    await writeFile(join(outDir, `${scenario.name}.md`), markdown);
  }
  await writeFile(join(outDir, 'results.json'), `${JSON.stringify({ ...info, scenarios: results }, null, 2)}\n`);
  process.stderr.write(`wrote ${selected.map((s) => `.bench/${s.name}.md`).join(', ')} and .bench/results.json\n`);

  // Failed requests make the figures meaningless; missed targets are a finding, not a crash.
  return results.some((result) => result.flagged) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
