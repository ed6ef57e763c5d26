import type { LoggerService } from '@nestjs/common';
import { inspect } from 'node:util';

/** One log line for what a library passed to console.*: an Error as its name and message, never its stack. */
function oneLine(args: unknown[]): string {
  return args
    .map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}` : typeof arg === 'string' ? arg : inspect(arg, { depth: 2, breakLength: Infinity })))
    .join(' ')
    .replace(/\n\s+at [\s\S]*$/, '')
    .replace(/\s*\n\s*/g, ' ');
}

/**
 * Libraries that log with console.* go through the service's logger instead. The A2A SDK prints each
 * error a caller provokes (a bad A2A-Version header, an unknown task id) with its stack trace; a caller's
 * input must never put a stack trace into the log, and on stdio nothing but protocol frames may reach
 * stdout. The logger itself writes to the stream directly, so this does not loop.
 */
export function routeConsoleTo(logger: LoggerService): void {
  console.error = (...args: unknown[]) => void logger.warn(oneLine(args), 'library');
  console.warn = (...args: unknown[]) => void logger.warn(oneLine(args), 'library');
  console.info = console.log = (...args: unknown[]) => void logger.log(oneLine(args), 'library');
  console.debug = (...args: unknown[]) => void logger.debug?.(oneLine(args), 'library');
}
