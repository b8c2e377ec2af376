import { cpus, loadavg } from 'node:os';
import type { MeasureOptions, ScenarioResult } from './measure.js';
import type { TargetSummary } from './scenario.js';
import { median } from './stats.js';

export interface RunInfo {
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  command: string;
  options: MeasureOptions;
  /** 1-minute load average when the run started: other work on the machine skews every figure. */
  loadAverage: number;
}

export function runInfo(command: string, options: MeasureOptions): RunInfo {
  const all = cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: all.length,
    cpuModel: all[0]?.model.trim() ?? 'unknown',
    command,
    options,
    loadAverage: loadavg()[0] ?? 0,
  };
}

/** The summary of one target, or a clear failure when the run produced none. */
export function summaryOf(summary: ReadonlyMap<string, TargetSummary>, id: string): TargetSummary {
  const found = summary.get(id);
  if (!found) throw new Error(`no results for target ${id}`);
  return found;
}

/**
 * `a`'s req/s over `b`'s, as the median of the per-round ratios. Neighbouring targets run seconds
 * apart, so a round's ratio sees the same machine; on a host with noisy neighbours (CPU steal)
 * that is far steadier than the ratio of two medians taken minutes apart.
 */
export function pairedRatio(summary: ReadonlyMap<string, TargetSummary>, a: string, b: string): number {
  const over = summaryOf(summary, a).rpsByRound;
  const under = summaryOf(summary, b).rpsByRound;
  return median(over.map((rps, i) => rps / (under[i] ?? Number.NaN)));
}

/**
 * `a`'s req/s per CPU second over `b`'s (`b`'s CPU time per request over `a`'s), paired round by
 * round: `pairedRatio` in CPU terms, without the time a server waited for a CPU (lib/cpu.ts). NaN without CPU figures.
 */
export function pairedCpuRatio(summary: ReadonlyMap<string, TargetSummary>, a: string, b: string): number {
  const over = summaryOf(summary, b).cpuUsByRound;
  const under = summaryOf(summary, a).cpuUsByRound;
  if (!over || !under) return Number.NaN;
  return median(over.map((us, i) => us / (under[i] ?? Number.NaN)));
}

export const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** A markdown table; `align` per column. */
export function table(header: string[], align: ('l' | 'r')[], rows: string[][]): string {
  const rule = align.map((a) => (a === 'r' ? '---:' : '---'));
  return [header, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** The markdown section for one scenario, ready to paste into the README. */
export function scenarioMarkdown(result: ScenarioResult, info: RunInfo): string {
  const { options } = info;
  const c = options.connections;
  const withCpu = result.targets.some(({ summary: s }) => s.cpuUs !== undefined);
  const rows = result.targets.map(({ label, summary: s }) => [
    label,
    fixed(s.rps, 0),
    fixed(s.p50, 0),
    fixed(s.p99, 0),
    fixed(s.p50Single, 3),
    ...(withCpu ? [s.cpuUs === undefined ? '—' : fixed(s.cpuUs, 1), s.mainThreadUs === undefined ? '—' : fixed(s.mainThreadUs, 1)] : []),
    s.errors > 0 ? `**${s.errors}** ⚠` : '0',
  ]);
  const ratioRows = result.ratios.map((r) => [r.label, `${fixed(r.value, r.unit ? 3 : 2)}${r.unit ? ` ${r.unit}` : ''}`, r.goal, r.pass ? 'PASS' : '**FAIL**']);
  const header = [
    `### ${result.title}`,
    '',
    `\`${info.command}\` on Node ${info.node}, ${info.cpus} CPU (${info.cpuModel}), load average ${fixed(info.loadAverage, 1)} at start, ${info.date}.`,
  ];
  // A scenario without load targets (instructions) reports only its own tables and notes.
  if (result.targets.length === 0) {
    return [...header, '', ...result.tables.flatMap((markdown) => [markdown, '']), ...result.notes.map((note) => `- ${note}`), ''].join('\n');
  }
  return [
    ...header,
    `Median of ${options.rounds} round${options.rounds === 1 ? '' : 's'}; targets alternate within each round; ` +
      (result.singleSeconds === options.duration
        ? `${options.duration} s per target per phase`
        : `${options.duration} s per target at ${c} connections, ${fixed(result.singleSeconds, 1)} s at 1 connection`) +
      `${options.warmup > 0 ? `, ${options.warmup} s warm-up per target before round 1` : ''}.`,
    '',
    table(
      ['Target', `req/s (${c} conn)`, `p50 ms (${c} conn)`, `p99 ms (${c} conn)`, 'p50 ms (1 conn)', ...(withCpu ? ['server CPU µs/req', 'main thread µs/req'] : []), 'errors'],
      ['l', 'r', 'r', 'r', 'r', ...(withCpu ? (['r', 'r'] as const) : []), 'r'],
      rows,
    ),
    '',
    table(['Check', 'Measured', 'Target', 'Result'], ['l', 'r', 'l', 'l'], ratioRows),
    '',
    ...result.tables.flatMap((markdown) => [markdown, '']),
    ...result.notes.map((note) => `- ${note}`),
    `- ${c}-connection figures come from autocannon 9, which records latency in whole milliseconds` +
      (result.targets.some((t) => t.loader === 'chainedLoad')
        ? ` (except ${result.targets.filter((t) => t.loader === 'chainedLoad').map((t) => t.label).join(' / ')}: the bench's own loop, \`chainedLoad\`, hrtime). `
        : '. ') +
      'The 1-connection p50 comes from a sequential loop instead (one keep-alive socket, `http.request`, ' +
      '`process.hrtime.bigint()`), so it has sub-millisecond resolution.',
    ...(withCpu
      ? [
          '- Server CPU µs/req: the CPU time the server process spent during its runs at ' +
            `${c} connections, over the requests it answered (Linux /proc, every thread: the event loop, libuv's pool, V8's helpers); ` +
            'main thread: the event loop alone. Unlike req/s it leaves out the time the server waited for a CPU.',
        ]
      : []),
    ...(info.loadAverage > info.cpus / 2
      ? [`- ⚠ The machine was busy when the run started (load average ${fixed(info.loadAverage, 1)} on ${info.cpus} CPU): expect noise.`]
      : []),
    ...(result.flagged ? ['- ⚠ **Some requests failed during this run (errors column): the figures are not trustworthy.**'] : []),
    '',
  ].join('\n');
}
