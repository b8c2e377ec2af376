/**
 * The platform's metrics in a prom-client registry (docs/operator.md#metrics). Label values are
 * bounded: operations, grant types, outcomes and stores are fixed lists; endpoints the host named
 * are as many as its code names. Applications, and the paths of guards that name no endpoint,
 * are capped per process, and what comes after the cap is counted as `other`: a caller who
 * invents paths fills the unnamed share only, never a named endpoint's label.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import type { GuardOutcome, Telemetry } from '../core/telemetry.js';

/** Distinct client ids, and distinct unnamed endpoints, a process labels before it answers `other`. */
export const LABEL_VALUE_CAP = 1000;

function cappedLabel(cap: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= cap) return 'other';
    seen.add(value);
    return value;
  };
}

export interface PrometheusTelemetry extends Telemetry {
  readonly registry: Registry;
}

type GuardedCounts = Record<GuardOutcome, number>;
const GUARD_OUTCOMES: readonly GuardOutcome[] = ['admitted', 'rejected', 'store_error'];

/**
 * Guarded calls counted in nested Maps between two reads of the registry: prom-client's labelled
 * `inc` builds and hashes a label string on every call, which the guard's hot path would pay per
 * request. The counter takes the counts (one `inc` per label set) whenever it is read.
 */
function guardedTally() {
  let byClient = new Map<string, Map<string, GuardedCounts>>();
  return {
    add(clientId: string, endpoint: string, outcome: GuardOutcome): void {
      let byEndpoint = byClient.get(clientId);
      if (!byEndpoint) byClient.set(clientId, (byEndpoint = new Map()));
      let counts = byEndpoint.get(endpoint);
      if (!counts) byEndpoint.set(endpoint, (counts = { admitted: 0, rejected: 0, store_error: 0 }));
      counts[outcome]++;
    },
    drain(into: (labels: { client_id: string; endpoint: string; outcome: GuardOutcome }, count: number) => void): void {
      const drained = byClient;
      byClient = new Map();
      for (const [clientId, byEndpoint] of drained) {
        for (const [endpoint, counts] of byEndpoint) {
          for (const outcome of GUARD_OUTCOMES) if (counts[outcome] > 0) into({ client_id: clientId, endpoint, outcome }, counts[outcome]);
        }
      }
    },
  };
}

export function createPrometheusTelemetry(registry: Registry = new Registry()): PrometheusTelemetry {
  const tally = guardedTally();
  const guarded: Counter<'client_id' | 'endpoint' | 'outcome'> = new Counter({
    name: 'courier_platform_guarded_calls_total',
    help: "Calls to the host's guarded OpenAPI routes, by application, endpoint and outcome",
    labelNames: ['client_id', 'endpoint', 'outcome'] as const,
    registers: [registry],
    collect: () => tally.drain((labels, count) => guarded.inc(labels, count)),
  });
  const tokens = new Counter({
    name: 'courier_platform_tokens_issued_total',
    help: 'Access tokens issued by the token endpoint, by grant type',
    labelNames: ['grant_type'] as const,
    registers: [registry],
  });
  const authFailures = new Counter({
    name: 'courier_platform_client_auth_failures_total',
    help: 'Failed client authentications at the token, revocation and introspection endpoints',
    registers: [registry],
  });
  const courierCalls = new Counter({
    name: 'courier_platform_courier_calls_total',
    help: 'Courier proxy calls that reached the upstream, by operation and outcome',
    labelNames: ['operation', 'outcome'] as const,
    registers: [registry],
  });
  const upstreamSeconds = new Histogram({
    name: 'courier_platform_courier_upstream_seconds',
    help: 'Time the courier upstream took to answer, retries included, by operation',
    labelNames: ['operation'] as const,
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: 'courier_platform_store_errors_total',
    help: 'Store calls that failed or missed their deadline, by store',
    labelNames: ['store'] as const,
    registers: [registry],
  });
  const client = cappedLabel(LABEL_VALUE_CAP);
  const unnamedEndpoint = cappedLabel(LABEL_VALUE_CAP);

  return {
    registry,
    guardedCall: (clientId, apiPath, outcome, named) => tally.add(client(clientId), named ? apiPath : unnamedEndpoint(apiPath), outcome),
    tokenIssued: (grantType) => tokens.inc({ grant_type: grantType }),
    clientAuthFailed: () => authFailures.inc(),
    courierCall(operation, outcome, seconds) {
      courierCalls.inc({ operation, outcome });
      upstreamSeconds.observe({ operation }, seconds);
    },
    storeError: (store) => storeErrors.inc({ store }),
  };
}
