import { checkTarget, loadTest, sequentialLatency, type LatencyResult, type LoadResult } from './load.js';
import type { ProbeResult, Ratio, Scenario, TargetSummary } from './scenario.js';
import { median } from './stats.js';

export interface MeasureOptions {
  rounds: number;
  /** Seconds per target per phase. */
  duration: number;
  /** Seconds of warm-up per target before the first round. */
  warmup: number;
  connections: number;
  /** Requests counted per target where a scenario counts a fixed number (instructions). */
  requests: number;
}

export interface TargetResult {
  id: string;
  label: string;
  /** Who loaded it at N connections: autocannon, or the runner's own loop for a chained target. */
  loader: 'autocannon' | 'chainedLoad';
  rounds: { load: LoadResult; single: LatencyResult }[];
  summary: TargetSummary;
}

export interface ScenarioResult {
  name: string;
  title: string;
  notes: string[];
  targets: TargetResult[];
  ratios: Ratio[];
  /** Seconds per target of the 1-connection phase (`--duration` times the scenario's `singleShare`). */
  singleSeconds: number;
  /** Markdown tables from the scenario's probe, printed after the checks. */
  tables: string[];
  /** Raw figures of the scenario's probe, if any. */
  probe?: unknown;
  /** Some request failed: the figures are not trustworthy. */
  flagged: boolean;
}

/** Medians of the CPU figures, when every round has them. */
function cpuSummary(rounds: LoadResult['cpu'][]): Pick<TargetSummary, 'cpuUs' | 'mainThreadUs' | 'cpuUsByRound'> {
  if (rounds.length === 0 || rounds.some((cpu) => cpu === undefined)) return {};
  const all = rounds as NonNullable<LoadResult['cpu']>[];
  return { cpuUs: median(all.map((cpu) => cpu.totalUs)), mainThreadUs: median(all.map((cpu) => cpu.mainUs)), cpuUsByRound: all.map((cpu) => cpu.totalUs) };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * Runs targets alternately so that drift on the machine (thermal, other load) hits them all alike:
 * every round loads each target at `connections`, then times each at 1 connection. Every other
 * round runs the targets in reverse order, so neighbours swap places and neither is always the
 * one measured later.
 */
export async function measureScenario(scenario: Scenario, options: MeasureOptions): Promise<ScenarioResult> {
  log(`# ${scenario.name}: starting servers`);
  const singleMs = options.duration * 1_000 * (scenario.singleShare ?? 1);
  const run = await scenario.setup(options);
  try {
    for (const target of run.targets) await checkTarget(target);
    if (run.targets.length > 0) log(`# ${scenario.name}: every target answers a successful envelope`);

    const rounds = new Map(run.targets.map((target) => [target.id, [] as TargetResult['rounds']]));
    for (let round = 1; round <= options.rounds; round++) {
      const loads = new Map<string, LoadResult>();
      const order = round % 2 === 1 ? run.targets : [...run.targets].reverse();
      for (const target of order) {
        if (round === 1 && options.warmup > 0) await loadTest(target, options.connections, options.warmup);
        const load = await loadTest(target, options.connections, options.duration);
        loads.set(target.id, load);
        log(`  round ${round} ${target.id} @${options.connections}: ${load.rps.toFixed(0)} req/s p50 ${load.p50} ms p99 ${load.p99} ms${load.cpu ? ` cpu ${load.cpu.totalUs.toFixed(1)} µs/req` : ''} errors ${load.errors}`);
      }
      for (const target of order) {
        const single = await sequentialLatency(target, singleMs);
        rounds.get(target.id)!.push({ load: loads.get(target.id)!, single });
        log(`  round ${round} ${target.id} @1: p50 ${single.p50.toFixed(3)} ms p99 ${single.p99.toFixed(3)} ms (${single.requests} requests) errors ${single.errors}`);
      }
    }

    const targets = run.targets.map((target): TargetResult => {
      const own = rounds.get(target.id)!;
      const of = (pick: (r: TargetResult['rounds'][number]) => number) => median(own.map(pick));
      return {
        id: target.id,
        label: target.label,
        loader: target.chain ? 'chainedLoad' : 'autocannon',
        rounds: own,
        summary: {
          rps: of((r) => r.load.rps),
          rpsByRound: own.map((r) => r.load.rps),
          p50: of((r) => r.load.p50),
          p99: of((r) => r.load.p99),
          p50Single: of((r) => r.single.p50),
          p99Single: of((r) => r.single.p99),
          errors: own.reduce((sum, r) => sum + r.load.errors + r.single.errors, 0),
          ...cpuSummary(own.map((r) => r.load.cpu)),
        },
      };
    });
    const summary = new Map(targets.map((target) => [target.id, target.summary]));
    let probe: ProbeResult = { ratios: [] };
    if (run.probe) {
      log(`# ${scenario.name}: probe`);
      probe = await run.probe(summary);
    }
    return {
      name: scenario.name,
      title: scenario.title,
      notes: [...scenario.notes, ...(probe.notes ?? [])],
      targets,
      singleSeconds: singleMs / 1_000,
      ratios: [...scenario.ratios(summary), ...probe.ratios],
      tables: probe.tables ?? [],
      ...(probe.data === undefined ? {} : { probe: probe.data }),
      flagged: targets.some((target) => target.summary.errors > 0),
    };
  } finally {
    await run.teardown();
  }
}
