import { Injectable } from '@nestjs/common';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { cutText } from '../common/cut-text.js';
import { AppConfig } from '../config/app-config.js';
import type { Caller } from '../identity/caller.js';
import { AuditEventEntity } from './audit-event.entity.js';
import type { SharedItem } from '../database/unit-of-work.js';
import { AuditWriter } from './audit-writer.js';
import { AUDIT_LIMITS } from './audit-bounds.js';
import { redact } from './redaction.js';
import { mcpServerSecrets } from '../config/agent-config.js';

export interface AuditRecord {
  caller: Caller;
  action: string;
  outcome: 'ok' | 'error' | 'rejected';
  taskId?: string | null;
  sessionId?: string | null;
  /** Summary of what was asked and why it ended so; callers pass image metadata, never image data. */
  detail?: Record<string, unknown>;
}

/**
 * A call's audit event before its outcome is known: what an edge (the tool pipeline, the Chat API,
 * A2A) hands to the service that acts, which completes it with the caller and the ids of what it did.
 */
export interface AuditDraft {
  action: string;
  detail: Record<string, unknown>;
}

/** Append-only audit trail of every MCP call and every Task state change. */
@Injectable()
export class AuditService {
  /** Configured secrets that must never appear in the log, whatever their shape. */
  private readonly knownSecrets: string[];

  constructor(
    private readonly writer: AuditWriter,
    config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.knownSecrets = [config.auth.adminToken, passwordOf(config.database.url), ...Object.values(config.ollama.headers), ...mcpServerSecrets(config.agent.mcpServers)].filter(
      (secret) => secret.length > 0,
    );
  }

  /** Writes one event; a failure propagates, so an action that must be audited fails with it. */
  async record(record: AuditRecord): Promise<void> {
    await this.writer.append(this.build(record));
  }

  /** The event as a step of the caller's unit of work: the audited change exists only if its event does. */
  entry(record: AuditRecord): SharedItem {
    return this.writer.entry(this.build(record));
  }

  private build(record: AuditRecord): AuditEventEntity {
    const event = new AuditEventEntity();
    event.at = nowIso(this.clock);
    event.actor = cutText(record.caller.user, AUDIT_LIMITS.actorChars, { mark: 'cut' });
    event.groups = record.caller.groups.length > 0 ? JSON.stringify(record.caller.groups) : null;
    event.source = record.caller.address;
    event.transport = record.caller.transport;
    event.client = record.caller.client === null ? null : cutText(record.caller.client, AUDIT_LIMITS.clientChars, { mark: 'cut' });
    event.action = record.action;
    event.outcome = record.outcome;
    event.taskId = record.taskId ?? null;
    event.sessionId = record.sessionId ?? null;
    event.detail = JSON.stringify(redact(record.detail ?? {}, this.knownSecrets));
    return event;
  }
}

function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}
