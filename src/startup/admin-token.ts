import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AgentConfig } from '../config/agent-config.js';
import { errnoReason, StartupError } from './startup-error.js';

/** Shortest token accepted from the file (the same floor as `auth.admin_token`). */
const MIN_CHARS = 24;

export interface FirstRunToken {
  token: string;
  /** Where it is kept (beside the database); null with an in-memory database, where it lasts one run. */
  file: string | null;
  created: boolean;
}

/**
 * With `auth.mode: none` and no `auth.admin_token`, the console would be unreachable: the first start
 * makes a random token and keeps it with the data (`admin-token`, mode 0600), as notebook servers do, so
 * the sign-in URL in the log keeps working across restarts. A configured token always wins.
 */
export function firstRunAdminToken(config: AgentConfig): FirstRunToken | null {
  if (config.auth.mode !== 'none' || config.auth.adminToken !== '') return null;
  if (config.database.type === 'sqlite' && config.database.path === ':memory:') return { token: newToken(), file: null, created: true };
  const file = join(dirname(config.database.path), 'admin-token');
  try {
    const kept = readKept(file);
    if (kept) return { token: kept, file, created: false };
    const token = newToken();
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    return { token, file, created: true };
  } catch (error) {
    throw new StartupError(
      `auth.admin_token: cannot keep a first-run token in ${file} (${errnoReason((error as NodeJS.ErrnoException).code)}); set auth.admin_token (at least ${MIN_CHARS} characters) instead`,
    );
  }
}

/** The kept token, with its mode put back to 0600 if someone widened it; null when there is none (or it is too short to trust). */
function readKept(file: string): string | null {
  const info = statSync(file, { throwIfNoEntry: false });
  if (!info) return null;
  const token = readFileSync(file, 'utf8').trim();
  if (token.length < MIN_CHARS) return null;
  if ((info.mode & 0o077) !== 0) chmodSync(file, 0o600);
  return token;
}

const newToken = () => randomBytes(24).toString('base64url');
