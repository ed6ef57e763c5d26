/**
 * How long a repeat of a signal counts as the same request to stop. A terminal's Ctrl-C signals its whole
 * foreground process group, so under `npm start` node gets SIGINT from the terminal and then the copy npm forwards
 * to its child a few milliseconds later: taken as a second Ctrl-C, it forced every such stop and cut the running
 * Task off (issue 36). A second Ctrl-C a person presses comes later than this.
 */
export const SAME_STOP_MS = 1000;

export interface TerminationOptions {
  /** One line for the log, at each decision: the drain started, a repeat was taken as the same request, a stop is forced. */
  log: (line: string) => void;
  exit?: (code: number) => void;
  now?: () => number;
}

/**
 * Runs `shutdown` once on SIGTERM or SIGINT (it drains the running Task), then exits 0 (1 if it failed). A second
 * signal more than SAME_STOP_MS after the first forces: exit 1 at once, for an operator who does not want to wait for
 * the grace period; one within it is the same request (see SAME_STOP_MS).
 */
export function onTermination(shutdown: (signal: NodeJS.Signals) => Promise<void>, options: TerminationOptions): void {
  const handle = terminationHandler(shutdown, options);
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}

/** What onTermination does on each signal, without registering it (unit tests drive it with their own clock). */
export function terminationHandler(shutdown: (signal: NodeJS.Signals) => Promise<void>, options: TerminationOptions): (signal: NodeJS.Signals) => void {
  const { log, exit = (code) => process.exit(code), now = Date.now } = options;
  let first: { signal: NodeJS.Signals; at: number } | null = null;
  const handle = (signal: NodeJS.Signals) => {
    if (first) {
      const again = signal === first.signal ? 'again' : `after ${first.signal}`;
      if (now() - first.at <= SAME_STOP_MS) return log(`${signal} ${again} within ${SAME_STOP_MS} ms: the same request to stop (still draining)`);
      log(`${signal} ${again}: forced stop, the running task is not waited for (it ends interrupted)`);
      return exit(1);
    }
    first = { signal, at: now() };
    shutdown(signal).then(
      () => exit(0),
      (error: Error) => {
        log(`shutdown failed: ${error.stack ?? error.message}`);
        exit(1);
      },
    );
  };
  return handle;
}
