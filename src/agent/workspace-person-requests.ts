import { createHash } from 'node:crypto';
import { unifiedDiff } from '../approvals/unified-diff.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { PersonPolicy, PersonRequest } from './core/tool-source.js';

/** A diff bounded for a form or a Task result (the approval is for exactly what the person saw). */
const DIFF_BOUNDS = { maxLines: 120, maxChars: 6000 };

/** A workspace command: asked for unless the mode is `never` or the allowlist has it (an empty one is refused without running). */
export function commandRequest(call: ChatToolCall, policy: PersonPolicy): PersonRequest | null {
  if (policy.mode === 'never') return null;
  const command = typeof call.function.arguments.command === 'string' ? call.function.arguments.command : '';
  if (command.trim() === '' || policy.commandAllowed(command)) return null;
  return { kind: 'approval', subject: command, diff: null, baseSha256: null };
}

/** A file change in `changes` mode: its path and diff, and the hash of the file it applies to; null when not asked for or when it cannot apply. */
export function changeRequest(preview: { path: string; before: string | null; after: string } | null, policy: PersonPolicy): PersonRequest | null {
  if (policy.mode !== 'changes' || !preview) return null;
  return { kind: 'approval', subject: preview.path, diff: unifiedDiff(preview.path, preview.before, preview.after, DIFF_BOUNDS).text, baseSha256: fileHash(preview.before) };
}

/** What a file change's approval is bound to: the file's content when the diff was made (`absent` for a new file). */
export const fileHash = (content: string | null) => (content === null ? 'absent' : createHash('sha256').update(content).digest('hex'));
