import type { ApprovalAnswer } from './approvals.repository.js';
import { readFormContent, type FormSchema } from './person-form.js';

// An answer given in place (tasks/update, the console) is the Tasks extension's ElicitResult, read here for each kind of request.

/** A refusal's reason as kept: bounded. */
const REASON_CHARS = 1000;

/** An ElicitResult for the approval form, or null when it is not one. */
export function readElicitResult(value: unknown): Pick<ApprovalAnswer, 'state' | 'reason'> | null {
  if (typeof value !== 'object' || value === null) return null;
  const { action, content } = value as { action?: unknown; content?: unknown };
  const fields = typeof content === 'object' && content !== null ? (content as Record<string, unknown>) : {};
  const reason = typeof fields.reason === 'string' && fields.reason.trim() !== '' ? fields.reason.trim().slice(0, REASON_CHARS) : null;
  if (action === 'decline' || action === 'cancel') return { state: 'denied', reason };
  if (action !== 'accept' || typeof fields.approve !== 'boolean') return null;
  return { state: fields.approve ? 'granted' : 'denied', reason };
}

/**
 * An ElicitResult for a server's form: its content when it fits the form (kept, as JSON, as the reason:
 * what the server is given), or a refusal (`decline`, `cancel`); null otherwise.
 */
export function readFormAnswer(value: unknown, schema: FormSchema): Pick<ApprovalAnswer, 'state' | 'reason'> | null {
  if (typeof value !== 'object' || value === null) return null;
  const { action, content } = value as { action?: unknown; content?: unknown };
  if (action === 'decline' || action === 'cancel') return { state: 'denied', reason: action };
  const read = action === 'accept' ? readFormContent(content ?? {}, schema) : null;
  return read && { state: 'granted', reason: JSON.stringify(read) };
}

/** An ElicitResult for a question's form: one of its options (kept as the reason), or a refusal to answer; null otherwise. */
export function readChoice(value: unknown, options: string[]): Pick<ApprovalAnswer, 'state' | 'reason'> | null {
  if (typeof value !== 'object' || value === null) return null;
  const { action, content } = value as { action?: unknown; content?: unknown };
  if (action === 'decline' || action === 'cancel') return { state: 'denied', reason: null };
  const choice = typeof content === 'object' && content !== null ? (content as Record<string, unknown>).choice : undefined;
  if (action !== 'accept' || typeof choice !== 'string' || !options.includes(choice)) return null;
  return { state: 'granted', reason: choice };
}
