import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import { shownEscaped } from './shown-text.js';
import { redactUrlCredentials } from './url-credentials.js';

export type LogFormat = 'text' | 'json';

/**
 * Nest's own start-up chatter: modules loaded, routes mapped, and "successfully started" printed
 * before the port is even bound (a port in use followed it with a trace). None of it is something an
 * operator acts on; our start-up lines say what was resolved, and a failure is one line from main.
 */
const FRAMEWORK_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestApplicationContext', 'ExceptionHandler']);
const QUIET_LEVELS: ReadonlySet<LogLevel> = new Set(['log', 'debug', 'verbose', 'error']);

/**
 * Every log line goes to stderr: in stdio mode stdout carries MCP frames only. Colour only on a
 * terminal (and never with NO_COLOR); `json` writes one JSON object per line for log shippers.
 * Credentials in URLs (`postgres://app:secret@db`) are masked in every line, whoever wrote it. In the
 * text format a message is one line whatever it holds: much of what is logged is someone else's text
 * (another server's stderr and errors, an identity, a command), and a line break in it would forge a
 * log line, ESC drive the operator's terminal; they are written as escapes (`\n`, `\x1b`). JSON escapes them itself.
 */
export class StderrLogger extends ConsoleLogger {
  private readonly json: boolean;

  constructor(format: LogFormat = 'text') {
    const json = format === 'json';
    super({ json, colors: !json && process.stderr.isTTY === true && !process.env.NO_COLOR, compact: true });
    this.json = json;
  }

  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel: LogLevel = 'log',
    _stream?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    if (context && FRAMEWORK_CONTEXTS.has(context) && QUIET_LEVELS.has(logLevel)) return;
    const oneLine = (text: string) => (this.json ? text : shownEscaped(text));
    const masked = messages.map((message) => (typeof message === 'string' ? oneLine(redactUrlCredentials(message)) : message));
    const stack = typeof errorStack === 'string' ? redactUrlCredentials(errorStack) : errorStack;
    super.printMessages(masked, context, logLevel, 'stderr', stack, params);
  }
}
