/**
 * A guard that names no endpoint (`platform.quota()`) counts each path it sees as an endpoint of
 * its own: its own quota, counters and usage history, kept until their periods end
 * (docs/quota.md#which-endpoint-is-counted). A thousand distinct paths in one process is almost
 * always a parameterised route left unnamed, where every id costs memory and store space and
 * gets a fresh allowance: the platform says so once, with the fix.
 */
import type { Logger } from '../core/logger.js';
import type { Telemetry } from '../core/telemetry.js';

/** Distinct paths of guards that name no endpoint a process counts before it warns. */
export const MANY_UNNAMED_ENDPOINTS = 1000;

/** `telemetry`, watching how many paths the guards that name no endpoint count. */
export function watchingUnnamedEndpoints(telemetry: Telemetry, logger: Logger): Telemetry {
  // Dropped once the warning is given, so a process inventing paths holds at most this many.
  let seen: Set<string> | undefined = new Set();
  return {
    guardedCall(clientId, endpoint, outcome, named) {
      telemetry.guardedCall(clientId, endpoint, outcome, named);
      // A call the store could not decide counted nothing.
      if (named || outcome === 'store_error' || !seen || seen.has(endpoint)) return;
      seen.add(endpoint);
      if (seen.size < MANY_UNNAMED_ENDPOINTS) return;
      seen = undefined;
      logger.warn(
        { endpoints: MANY_UNNAMED_ENDPOINTS, latest: endpoint },
        `guards that name no endpoint have counted ${MANY_UNNAMED_ENDPOINTS} distinct paths, each an endpoint with its own quota, counters and usage history: ` +
          "name parameterised routes, platform.quota('/openapi/v1/orders/:id') (docs/quota.md#which-endpoint-is-counted)",
      );
    },
    tokenIssued: (grantType) => telemetry.tokenIssued(grantType),
    clientAuthFailed: () => telemetry.clientAuthFailed(),
    courierCall: (operation, outcome, seconds) => telemetry.courierCall(operation, outcome, seconds),
    storeError: (name) => telemetry.storeError(name),
  };
}
