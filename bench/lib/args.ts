import { parseArgs } from 'node:util';
import type { MeasureOptions } from './measure.js';

export interface BenchArgs extends MeasureOptions {
  /** Scenario names; empty means all. */
  only: string[];
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --duration <s>      seconds per target per phase (default 3, 1..60)
  --rounds <n>        rounds; the median is reported (default 5, 1..15)
  --warmup <s>        warm-up seconds per target before round 1 (default 1, 0..30)
  --connections <n>   autocannon connections (default 32, 1..1024)
  --requests <n>      requests counted per target by the instructions scenario (default 2000, 100..20000)
  --only <scenario>   run only this scenario (repeat or comma-separate)
  --help`;

/** Every knob is bounded so that a typo cannot start an hour-long run. */
function bounded(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number in ${min}..${max}, got ${raw}`);
  return value;
}

export function parseBenchArgs(argv: string[]): BenchArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      requests: { type: 'string' },
      only: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return {
    duration: bounded(values.duration, 'duration', 3, 1, 60),
    rounds: Math.round(bounded(values.rounds, 'rounds', 5, 1, 15)),
    warmup: bounded(values.warmup, 'warmup', 1, 0, 30),
    connections: Math.round(bounded(values.connections, 'connections', 32, 1, 1024)),
    requests: Math.round(bounded(values.requests, 'requests', 2000, 100, 20_000)),
    only: (values.only ?? []).flatMap((item) => item.split(',')).map((item) => item.trim()).filter(Boolean),
    help: values.help ?? false,
  };
}
