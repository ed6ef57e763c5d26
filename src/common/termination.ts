/**
 * Runs `shutdown` once on SIGTERM or SIGINT, then exits 0 (1 if it failed). A second signal while
 * shutting down exits at once, for an operator who does not want to wait for the grace period.
 */
export function onTermination(shutdown: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    shutdown(signal).then(
      () => process.exit(0),
      (error: Error) => {
        process.stderr.write(`shutdown failed: ${error.stack ?? error.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
