/**
 * An error as the log should show it: its stack (which starts with its name and message) when it
 * has one, so the cause of a failure can be found without reproducing it.
 */
export function errorForLog(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}
