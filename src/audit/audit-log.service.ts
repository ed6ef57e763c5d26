import { Injectable } from '@nestjs/common';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import { chainHash } from './audit-chain.js';
import type { AuditEventEntity } from './audit-event.entity.js';
import { AuditRepository, type AuditConditions, type EventSize } from './audit.repository.js';

export interface AuditFilters {
  actor?: string;
  action?: string;
  outcome?: string;
  taskId?: string;
  sessionId?: string;
  /** ISO-8601 bounds on `at`, inclusive from, exclusive to. */
  from?: string;
  to?: string;
}

/** An event as listed: long fields cut (`detail` holds at most LIST_DETAIL_CHARS of its JSON text). */
export interface ListedAuditEvent {
  event: AuditEventEntity;
  /** The length of the whole detail; more than `event.detail` holds when it was cut for the list. */
  detailChars: number;
}

export interface AuditPage {
  items: ListedAuditEvent[];
  /** Opaque; absent on the last page. */
  nextCursor: string | null;
}

export interface Verification {
  ok: boolean;
  checked: number;
  firstBadSeq: number | null;
  reason: string | null;
  head: { seq: number; hash: string };
  anchor: { seq: number; hash: string };
}

/** A `{seq, hash}` the service logged outside the database (`audit checkpoint seq=… hash=…`). */
export interface Checkpoint {
  seq: number;
  hash: string;
}

const exactly =
  (column: string) =>
  (value: string): AuditConditions[number] => [`${column} = ?`, [value]];
const likeLiteral = (text: string) => text.replace(/[!%_]/g, (c) => `!${c}`);

/**
 * Each filter as SQL. `action` matches the start of the action or of any word in it, so `agent_run`
 * finds `tools/call agent_run` and `task` finds `task.status`.
 */
const CONDITIONS: Record<keyof AuditFilters, (value: string) => AuditConditions[number]> = {
  actor: exactly('actor'),
  action: (value) => ["(action LIKE ? ESCAPE '!' OR action LIKE ? ESCAPE '!')", [`${likeLiteral(value)}%`, `% ${likeLiteral(value)}%`]],
  outcome: exactly('outcome'),
  taskId: exactly('task_id'),
  sessionId: exactly('session_id'),
  from: (value) => ['at >= ?', [value]],
  to: (value) => ['at < ?', [value]],
};
/**
 * What a listing reads of each event. Events written before their size was bounded may hold
 * megabytes: a page of them is cut in the query itself, so a page costs the same whatever is stored.
 */
export const LIST_DETAIL_CHARS = 4096;
/** Detail characters one read of whole events may hold (at least one event is read). */
const READ_DETAIL_CHARS = 8 * 1024 * 1024;
/** Events per read of a verification walk: about 5 ms of hashing, the longest the walk holds the event loop. */
const VERIFY_PAGE = 1000;
/** Walks of the chain before a failure is reported, when retention purges keep moving the anchor. */
const VERIFY_ATTEMPTS = 3;

/** Reads of the audit log: search with keyset cursors, export pages, and chain verification. */
@Injectable()
export class AuditLogService {
  constructor(private readonly repository: AuditRepository) {}

  /**
   * Newest first. The cursor is the last seen `seq` (events only ever get higher numbers), so paging
   * stays exact while events are being written: no duplicates, no gaps.
   */
  async search(filters: AuditFilters, limit: number, cursor: string | null): Promise<AuditPage> {
    const before = cursor === null ? null : decodeCursor(cursor);
    const rows = await this.repository.listed(conditions(filters, before === null ? [] : [['seq < ?', [before]]]), limit + 1, LIST_DETAIL_CHARS);
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1].event.seq) : null };
  }

  get(seq: number): Promise<AuditEventEntity | null> {
    return this.repository.get(seq);
  }

  /** Matching events oldest first, a page at a time, for streamed exports. */
  async *stream(filters: AuditFilters, pageSize = 1000): AsyncGenerator<AuditEventEntity> {
    let after = 0;
    for (;;) {
      const sizes = await this.repository.sizes(conditions(filters, [['seq > ?', [after]]]), pageSize);
      for await (const events of this.wholeEvents(conditions(filters, []), sizes)) yield* events;
      if (sizes.length < pageSize) return;
      after = sizes[sizes.length - 1].seq;
    }
  }

  /**
   * Walks the chain from the anchor to the head. With a checkpoint from the service log, also proves
   * that nothing after it was cut off: whoever can write the database can remove the last events and
   * move the head back so that the chain alone still verifies, but cannot change what was logged.
   */
  async verify(checkpoint?: Checkpoint): Promise<Verification> {
    // A retention purge that commits while the chain is walked removes events the walk expected from
    // the anchor it read: that is no tampering, and the walk starts again from the new anchor.
    for (let attempt = 1; ; attempt++) {
      const verification = await this.walkChain(checkpoint);
      if (verification.ok || attempt === VERIFY_ATTEMPTS || !(await this.anchorMovedFrom(verification.anchor.seq))) return verification;
    }
  }

  /**
   * One walk, up to the head as read at its start. The service keeps appending meanwhile: events
   * committed after that read are not the walk's (they come with a later head), so a live log verifies.
   * Events beyond the current head are another matter: the writer never leaves any, so they were put there.
   */
  private async walkChain(checkpoint?: Checkpoint): Promise<Verification> {
    const { head, anchor } = await this.repository.head();
    const headSeq = head.seq;
    const result = (firstBadSeq: number | null, reason: string | null, checked: number): Verification => ({
      ok: firstBadSeq === null,
      checked,
      firstBadSeq,
      reason,
      head,
      anchor,
    });
    let expectedSeq = anchor.seq + 1;
    let previous = anchor.hash;
    let checked = 0;
    for (;;) {
      const sizes = await this.repository.sizes(
        [
          ['seq >= ?', [expectedSeq]],
          ['seq <= ?', [headSeq]],
        ],
        VERIFY_PAGE,
      );
      // Group by group, each checked in one synchronous loop (an await per event cost more than its hash).
      for await (const events of this.wholeEvents([], sizes)) {
        for (const event of events) {
          if (Number(event.seq) !== expectedSeq) return result(expectedSeq, `event ${expectedSeq} is missing`, checked);
          if (event.prevHash !== previous) return result(expectedSeq, 'does not link to the previous event', checked);
          if (chainHash(previous, event) !== event.hash) return result(expectedSeq, 'its content does not match its hash', checked);
          previous = event.hash!;
          expectedSeq++;
          checked++;
        }
      }
      if (sizes.length < VERIFY_PAGE) break;
      // Other requests get their turn between pages: on SQLite every read is synchronous, and a walk of
      // a million events would otherwise hold the event loop for seconds.
      await nextTurn();
    }
    if (expectedSeq - 1 !== headSeq || previous !== head.hash) {
      return result(expectedSeq, `the chain ends at ${expectedSeq - 1} but the head is at ${headSeq}`, checked);
    }
    const beyond = await this.repository.firstBeyondHead();
    if (beyond !== null) return result(beyond, `event ${beyond} is beyond the head`, checked);
    const mismatch = checkpoint && (await this.checkpointMismatch(checkpoint, headSeq, anchor));
    return mismatch ? result(mismatch.seq, mismatch.reason, checked) : result(null, null, checked);
  }

  /**
   * The whole events `sizes` names (those of its range that match `filters`), in order, in groups of at most
   * READ_DETAIL_CHARS of detail: memory stays bounded by one group (or one event) whatever old,
   * unbounded events the log holds.
   */
  private async *wholeEvents(filters: AuditConditions, sizes: EventSize[]): AsyncGenerator<AuditEventEntity[]> {
    for (let start = 0; start < sizes.length;) {
      let end = start + 1;
      for (let chars = sizes[start].size; end < sizes.length && chars + sizes[end].size <= READ_DETAIL_CHARS; end++) chars += sizes[end].size;
      yield await this.repository.between(filters, sizes[start].seq, sizes[end - 1].seq);
      start = end;
    }
  }

  private async anchorMovedFrom(anchorSeq: number): Promise<boolean> {
    return (await this.repository.anchorSeq()) !== anchorSeq;
  }

  /** Why a verified chain contradicts the logged checkpoint, or null when it agrees (or was purged past it). */
  private async checkpointMismatch(checkpoint: Checkpoint, headSeq: number, anchor: Checkpoint): Promise<{ seq: number; reason: string } | null> {
    if (checkpoint.seq > headSeq) {
      return { seq: headSeq + 1, reason: `the logged checkpoint ${checkpoint.seq} is beyond the head ${headSeq}: events were removed from the end` };
    }
    // Retention removed events up to the anchor: one before it can no longer be compared, the anchor itself can.
    if (checkpoint.seq < anchor.seq) return null;
    const hash = checkpoint.seq === anchor.seq ? anchor.hash : await this.repository.hashAt(checkpoint.seq);
    return hash === checkpoint.hash ? null : { seq: checkpoint.seq, reason: `event ${checkpoint.seq} does not match the logged checkpoint` };
  }
}

function conditions(filters: AuditFilters, extra: AuditConditions): AuditConditions {
  const parts: AuditConditions = [...extra];
  for (const [key, condition] of Object.entries(CONDITIONS) as [keyof AuditFilters, (value: string) => AuditConditions[number]][]) {
    if (filters[key] !== undefined) parts.push(condition(filters[key]));
  }
  return parts;
}
