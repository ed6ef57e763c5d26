import { createHash } from 'node:crypto';
import type { AuditEventEntity } from './audit-event.entity.js';

/** The fields a hash covers, in a fixed order: everything about the event except its own hash. */
function canonical(event: AuditEventEntity): string {
  return JSON.stringify([
    Number(event.seq),
    event.at,
    event.actor,
    event.groups,
    event.source,
    event.transport,
    event.client,
    event.action,
    event.outcome,
    event.taskId,
    event.sessionId,
    event.detail,
  ]);
}

/** SHA-256 over the previous hash and the canonical event: changing, removing or reordering any event breaks it. */
export function chainHash(prevHash: string, event: AuditEventEntity): string {
  return createHash('sha256').update(prevHash).update('\n').update(canonical(event)).digest('hex');
}
