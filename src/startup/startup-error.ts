import { ConfigError } from '../config/agent-config.js';

/** A start-up failure already phrased for the operator: names the key or path, says what to do. */
export class StartupError extends Error {}

type Errno = NodeJS.ErrnoException & { address?: string; port?: number };

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a parent is not a directory',
  ENOSPC: 'no space left on device',
};

/** `EACCES` as words an operator reads (`permission denied`); unknown codes as they are. */
export const errnoReason = (code: string | undefined) => (code ? (REASONS[code] ?? code) : 'unknown error');

/**
 * One line per problem, never a stack trace: what failed, with the key or path to fix. Errors nobody
 * phrased (a driver's connection error, say) still come out as their first line.
 */
function describeStartupFailure(error: unknown): string[] {
  if (error instanceof ConfigError) return error.problems;
  if (error instanceof StartupError) return [error.message];
  const errno = error as Errno;
  if (errno?.syscall === 'listen') {
    const where = `${errno.address ?? ''}:${errno.port ?? ''}`;
    if (errno.code === 'EADDRINUSE') return [`server.port: ${where} is already in use (another instance, or choose another port)`];
    if (errno.code === 'EACCES') return [`server.port: ${where} needs privileges to bind (choose a port above 1023)`];
    if (errno.code === 'EADDRNOTAVAIL') return [`server.host: ${errno.address} is not an address of this machine`];
  }
  if (errno?.code && errno.path) return [`cannot ${errno.syscall ?? 'open'} ${errno.path}: ${errnoReason(errno.code)}`];
  const message = error instanceof Error ? error.message : String(error);
  return [`start-up failed: ${message.split('\n')[0]}`];
}

/** Writes the failure on stderr as `ollama-agent-mcp: …` lines and exits with status 1. */
export function exitOnStartupFailure(error: unknown): never {
  for (const line of describeStartupFailure(error)) process.stderr.write(`ollama-agent-mcp: ${line}\n`);
  process.exit(1);
}
