/** What a scenario gives the runner: targets to load, and how to judge the medians. */
import type { MeasureOptions } from './measure.js';

/**
 * A stateful sequence of requests for one virtual connection, for calls that cannot be replayed
 * as they are (a refresh token rotates on every use). The runner keeps each connection's chain
 * strictly sequential: `next()` is only called once the previous answer went to `answer()`.
 */
export interface RequestChain {
  /** The next request's body and extra headers (merged over the target's). */
  next(): { body?: string; headers?: Record<string, string> };
  /** Sees every answer (status 0 when the request failed); true when it is a success. */
  answer(status: number, body: string): boolean;
}

export interface Target {
  /** Short key used in results.json, e.g. `direct`. */
  id: string;
  /** Row label in the table. */
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** True when a 2xx body is a success: an upstream may answer HTTP 200 with an error envelope. */
  verify: (body: string) => boolean;
  /**
   * When set, the target is loaded with the runner's own closed loop instead of autocannon:
   * virtual connection `i` (0-based, below `--connections`) sends what `chain(i)` gives, in order.
   * The same index must give the same chain on every call: its state carries over between runs.
   */
  chain?: (connection: number) => RequestChain;
  /** The server process that answers: its CPU time per request is reported next to its req/s (lib/cpu.ts). */
  pid?: number;
}

/** Medians over rounds for one target; errors is the total over every run. */
export interface TargetSummary {
  rps: number;
  /** req/s of each round, in round order: for ratios paired round by round (`pairedRatio`). */
  rpsByRound: number[];
  p50: number;
  p99: number;
  /** p50 at 1 connection, ms (sequential loop, fractional). */
  p50Single: number;
  p99Single: number;
  errors: number;
  /** The server's CPU time per request at N connections, µs (lib/cpu.ts): all its threads, and its main thread alone. */
  cpuUs?: number;
  mainThreadUs?: number;
  /** `cpuUs` of each round, in round order. */
  cpuUsByRound?: number[];
}

/** A derived figure compared with a goal, e.g. platform rps / forwarder rps >= 0.80. */
export interface Ratio {
  label: string;
  value: number;
  unit: string;
  goal: string;
  pass: boolean;
}

/** What `ScenarioRun.probe` found: more checks, notes and pre-rendered markdown tables. */
export interface ProbeResult {
  ratios: Ratio[];
  notes?: string[];
  /** Markdown tables printed after the checks. */
  tables?: string[];
  /** Raw figures, kept in results.json. */
  data?: unknown;
}

export interface ScenarioRun {
  /** Measured in this order, alternating, every round. */
  targets: Target[];
  /**
   * Runs once after the rounds, before teardown, while the servers are otherwise idle: e.g.
   * counts store round trips per request. Gets the medians of the rounds.
   */
  probe?(summary: ReadonlyMap<string, TargetSummary>): Promise<ProbeResult>;
  teardown(): Promise<void>;
}

export interface Scenario {
  name: string;
  title: string;
  /** Lines printed under the table. */
  notes: string[];
  /**
   * Share of `--duration` spent on each target's 1-connection phase (default 1). Scenarios with
   * many targets shorten it to keep the whole bench within a few minutes.
   */
  singleShare?: number;
  /** Left out of a plain `npm run bench`; runs only when named with `--only` (e.g. it needs valgrind). */
  optIn?: boolean;
  setup(options: MeasureOptions): Promise<ScenarioRun>;
  ratios(summary: ReadonlyMap<string, TargetSummary>): Ratio[];
}
