/**
 * Batches of calls per key, for a store that can answer many calls in one request: the calls
 * that arrive in one turn of the event loop go together, and while a batch of a key is in
 * flight, that key's next calls wait and go together as its next batch.
 *
 * Why per turn: under load a Node server reads many requests in one turn (one poll phase).
 * Queued until `setImmediate`, the end of that turn, they need no timer and delay nobody.
 *
 * Why one in flight per key: a key's batches touch the same rows, so a second one sent at once
 * would only wait in the database for the first one's row locks, holding a pooled connection
 * that other keys' calls then wait for. Held back here instead, the calls that arrive meanwhile
 * make the next batch larger, which is what keeps up with the load.
 *
 * A batch in flight for longer than `stalledMs` no longer holds its key's next calls back: a
 * connection that silently stopped answering cannot stall a key for longer than that.
 */

export interface Batch<R, C> {
  /** The request of the batch's first call. */
  request: R;
  calls: C[];
}

/** Runs one batch; its promise settles when the batch is done, and must not reject. */
export type SendBatch<R, C> = (batch: Batch<R, C>) => Promise<void>;

interface Lane<R, C> {
  key: string;
  waiting: Batch<R, C> | undefined;
  /** Batches in flight. */
  sending: number;
  /** When the last one was sent (performance.now()). */
  sentAt: number;
  /** In the list sent at the end of this turn. */
  due: boolean;
}

export interface Batcher<R, C> {
  /** Queues `call`; calls with the same `key` share a batch (the first one's `request` speaks for all). */
  add(key: string, request: R, call: C): void;
  /** Sends what is queued for this turn now, and waits until no batch is in flight. */
  drain(): Promise<void>;
}

export function batcher<R, C>(send: SendBatch<R, C>, stalledMs: number): Batcher<R, C> {
  const lanes = new Map<string, Lane<R, C>>();
  const inFlight = new Set<Promise<void>>();
  let due: Lane<R, C>[] = [];

  const start = (lane: Lane<R, C>): void => {
    const batch = lane.waiting!;
    lane.waiting = undefined;
    lane.sending++;
    lane.sentAt = performance.now();
    const done: Promise<void> = send(batch).finally(() => {
      inFlight.delete(done);
      lane.sending--;
      if (lane.waiting && !lane.due) start(lane);
      else if (lane.sending === 0 && !lane.waiting) lanes.delete(lane.key);
    });
    inFlight.add(done);
  };

  const flush = (): void => {
    const lanesDue = due;
    due = [];
    for (const lane of lanesDue) {
      lane.due = false;
      if (lane.waiting) start(lane);
    }
  };

  return {
    add(key, request, call) {
      let lane = lanes.get(key);
      if (!lane) {
        lane = { key, waiting: undefined, sending: 0, sentAt: 0, due: false };
        lanes.set(key, lane);
      }
      if (lane.waiting) lane.waiting.calls.push(call);
      else lane.waiting = { request, calls: [call] };
      if (!lane.due && (lane.sending === 0 || performance.now() - lane.sentAt > stalledMs)) {
        lane.due = true;
        if (due.push(lane) === 1) setImmediate(flush);
      }
    },
    async drain() {
      if (due.length > 0) flush();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
