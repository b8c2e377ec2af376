/** A failure the command line reports as one line and an exit code, never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    /** 2: the command was used wrongly; 1: it was used rightly and failed. */
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The one-line reason of a failure from a library (pg, node:net), without its stack. */
export function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reasonOf(error.errors[0]);
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
