/**
 * The guard's side of the usage history: counts in memory, flushed to the history store every
 * few seconds and at close, so a guarded call never waits for (or fails with) the history.
 *
 * Per call: the clock, two Map lookups and an increment. One slot per client and path holds the
 * current hour's counts; it is reused across flushes (reset to zero) and dropped only after a
 * whole interval without calls, so a busy endpoint allocates nothing. A slot whose hour ends
 * before the flush hands its counts to `spilled`, to go out with the next flush.
 *
 * A flush that fails keeps its counts for the next one, up to `maxPending` rows (beyond that the
 * newest rows are dropped and counted), with one warning per outage and one info when it heals.
 *
 * Paths of guards that name no endpoint are recorded by name up to UNNAMED_PATHS_PER_HOUR per
 * application and hour; the calls of further ones go to OTHER_PATHS. The check runs only when a
 * path gets its slot for the hour, so a busy endpoint pays nothing for it.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { GuardOutcome, Telemetry } from '../core/telemetry.js';
import { HOUR_MS, OTHER_PATHS, UNNAMED_PATHS_PER_HOUR, type HistoryRetention, type HourCount, type UsageHistoryStore } from './types.js';

export interface UsageRecorder {
  /** One guarded call's verdict; `named`: the guard names its endpoint. Never throws, never waits. */
  record(clientId: string, apiPath: string, admitted: boolean, named: boolean): void;
  /** Sends what was counted since the last flush; resolves when the store answered (never rejects). */
  flush(): Promise<void>;
  /** Stops the timer and flushes once more. */
  close(): Promise<void>;
}

export interface UsageRecorderOptions {
  store: UsageHistoryStore;
  retention: HistoryRetention;
  flushIntervalMs: number;
  now: Clock;
  logger: Logger;
  /** Rows kept for the next flush while the store fails. Default 100 000. */
  maxPending?: number;
}

const keyOf = (count: HourCount): string => JSON.stringify([count.clientId, count.apiPath, count.hour]);

export function createUsageRecorder(options: UsageRecorderOptions): UsageRecorder {
  const { store, retention, now, logger } = options;
  const maxPending = options.maxPending ?? 100_000;
  const slots = new Map<string, Map<string, HourCount>>();
  let spilled: HourCount[] = [];
  /** Rows of failed flushes, by key, waiting for the next one. */
  let pending = new Map<string, HourCount>();
  let dropped = 0;
  let failing = false;
  let inFlight: Promise<void> | undefined;
  /** Per application, the unnamed-guard paths recorded by name in the current hour. */
  const unnamed = new Map<string, { hour: number; paths: Set<string> }>();

  /** Where an unnamed-guard path's calls of this hour go: its own name, or OTHER_PATHS past the bound. */
  const unnamedPath = (clientId: string, apiPath: string, hour: number): string => {
    let seen = unnamed.get(clientId);
    if (!seen || seen.hour !== hour) unnamed.set(clientId, (seen = { hour, paths: new Set() }));
    if (seen.paths.has(apiPath)) return apiPath;
    if (seen.paths.size >= UNNAMED_PATHS_PER_HOUR) return OTHER_PATHS;
    seen.paths.add(apiPath);
    return apiPath;
  };

  const keep = (count: HourCount): void => {
    const key = keyOf(count);
    const known = pending.get(key);
    if (known) {
      known.admitted += count.admitted;
      known.rejected += count.rejected;
    } else if (pending.size < maxPending) pending.set(key, { ...count });
    else dropped += count.admitted + count.rejected;
  };

  /** The slot of a path for the hour; the one it held for an earlier hour goes out with the next flush. */
  const slotOf = (byPath: Map<string, HourCount>, clientId: string, apiPath: string, hour: number): HourCount => {
    let slot = byPath.get(apiPath);
    if (slot && slot.hour === hour) return slot;
    if (slot && (slot.admitted > 0 || slot.rejected > 0)) spilled.push(slot);
    byPath.set(apiPath, (slot = { clientId, apiPath, hour, admitted: 0, rejected: 0 }));
    return slot;
  };

  /** Everything counted since the last flush, each key once; empties the slots. */
  const take = (): HourCount[] => {
    for (const count of spilled) keep(count);
    spilled = [];
    for (const [clientId, byPath] of slots) {
      for (const [apiPath, slot] of byPath) {
        if (slot.admitted === 0 && slot.rejected === 0) byPath.delete(apiPath);
        else {
          keep(slot);
          slot.admitted = 0;
          slot.rejected = 0;
        }
      }
      if (byPath.size === 0) slots.delete(clientId);
    }
    // A past hour's paths bound nothing any more: an application that stopped calling keeps none.
    const hour = Math.floor(now() / HOUR_MS) * HOUR_MS;
    for (const [clientId, seen] of unnamed) if (seen.hour < hour) unnamed.delete(clientId);
    const rows = [...pending.values()];
    pending = new Map();
    return rows;
  };

  const send = async (): Promise<void> => {
    const rows = take();
    if (rows.length === 0) return;
    try {
      await store.add(rows, Math.floor(now()), retention);
      if (failing) logger.info({ store: store.kind }, 'usage history: the store answers again; the kept counts are written');
      failing = false;
    } catch (error) {
      for (const row of rows) keep(row);
      if (!failing) logger.warn({ store: store.kind, err: error }, 'usage history: a flush failed; the counts are kept for the next one');
      failing = true;
    }
    if (dropped > 0) {
      logger.warn({ store: store.kind, calls: dropped }, 'usage history: too many unsent counts; calls left out of the history');
      dropped = 0;
    }
  };

  const flush = (): Promise<void> => {
    // One flush at a time: the next timer tick takes what arrived meanwhile.
    inFlight ??= send().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  const timer = setInterval(() => void flush(), options.flushIntervalMs);
  timer.unref?.();

  return {
    record(clientId, path, admitted, named) {
      const hour = Math.floor(now() / HOUR_MS) * HOUR_MS;
      let byPath = slots.get(clientId);
      if (!byPath) slots.set(clientId, (byPath = new Map()));
      let slot = byPath.get(path);
      if (!slot || slot.hour !== hour) slot = slotOf(byPath, clientId, named ? path : unnamedPath(clientId, path, hour), hour);
      if (admitted) slot.admitted++;
      else slot.rejected++;
    },
    flush,
    async close() {
      clearInterval(timer);
      await inFlight;
      await flush();
    },
  };
}

/**
 * Telemetry that also records each guarded call's verdict. The guard reports every decision
 * there once; a call the store could not decide (503) is neither admitted nor rejected.
 */
export function recordingTelemetry(telemetry: Telemetry, recorder: UsageRecorder): Telemetry {
  return {
    guardedCall(clientId: string, endpoint: string, outcome: GuardOutcome, named: boolean) {
      telemetry.guardedCall(clientId, endpoint, outcome, named);
      if (outcome !== 'store_error') recorder.record(clientId, endpoint, outcome === 'admitted', named);
    },
    tokenIssued: (grantType) => telemetry.tokenIssued(grantType),
    clientAuthFailed: () => telemetry.clientAuthFailed(),
    courierCall: (operation, outcome, seconds) => telemetry.courierCall(operation, outcome, seconds),
    storeError: (name) => telemetry.storeError(name),
  };
}
