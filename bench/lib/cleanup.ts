/**
 * Clean-ups that must also run on Ctrl-C (Redis keys, PostgreSQL schemas of the current run).
 * A scenario's teardown runs them in the normal case; run.ts runs whatever is left on SIGINT/SIGTERM.
 */

type Cleanup = () => Promise<void>;

const pending = new Set<Cleanup>();

/** Registers `cleanup` until the returned function is called (which runs it, once). */
export function registerCleanup(cleanup: Cleanup): () => Promise<void> {
  let done = false;
  const once: Cleanup = async () => {
    if (done) return;
    done = true;
    pending.delete(once);
    await cleanup();
  };
  pending.add(once);
  return once;
}

/** Runs every registered clean-up, each bounded by `timeoutMs`; failures are reported, not thrown. */
export async function runPendingCleanups(timeoutMs = 5_000): Promise<void> {
  await Promise.all(
    [...pending].map(async (cleanup) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`clean-up took more than ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([cleanup(), timeout]);
      } catch (error) {
        process.stderr.write(`clean-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}
