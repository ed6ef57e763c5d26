import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import { HotPathSql } from '../database/hot-path-sql.js';
import { chainHash } from './audit-chain.js';
import { AuditEventEntity } from './audit-event.entity.js';

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

const exactly = (column: string) => (value: string): Condition => [`${column} = ?`, [value]];
const likeLiteral = (text: string) => text.replace(/[!%_]/g, (c) => `!${c}`);

/**
 * Each filter as SQL. `action` matches the start of the action or of any word in it, so `agent_run`
 * finds `tools/call agent_run` and `task` finds `task.status`.
 */
const CONDITIONS: Record<keyof AuditFilters, (value: string) => Condition> = {
  actor: exactly('actor'),
  action: (value) => ["(action LIKE ? ESCAPE '!' OR action LIKE ? ESCAPE '!')", [`${likeLiteral(value)}%`, `% ${likeLiteral(value)}%`]],
  outcome: exactly('outcome'),
  taskId: exactly('task_id'),
  sessionId: exactly('session_id'),
  from: (value) => ['at >= ?', [value]],
  to: (value) => ['at < ?', [value]],
};
type Condition = [sql: string, params: unknown[]];
/**
 * What a listing reads of each event. Events written before their size was bounded may hold
 * megabytes: a page of them is cut in the query itself, so a page costs the same whatever is stored.
 */
export const LIST_DETAIL_CHARS = 4096;
const LISTED_COLUMNS = `seq, at, actor, groups, source, transport, substr(client, 1, 200) AS client, action, outcome, task_id, session_id,
  substr(detail, 1, ${LIST_DETAIL_CHARS}) AS detail, length(detail) AS detail_chars, prev_hash, hash`;
/** Detail characters one read of whole events may hold (at least one event is read). */
const READ_DETAIL_CHARS = 8 * 1024 * 1024;
/** Events per read of a verification walk: about 5 ms of hashing, the longest the walk holds the event loop. */
const VERIFY_PAGE = 1000;
/** Walks of the chain before a failure is reported, when retention purges keep moving the anchor. */
const VERIFY_ATTEMPTS = 3;

/** Reads of the audit log: search with keyset cursors, export pages, and chain verification. */
@Injectable()
export class AuditLogService {
  private readonly sql: HotPathSql;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.sql = new HotPathSql(dataSource);
  }

  /**
   * Newest first. The cursor is the last seen `seq` (events only ever get higher numbers), so paging
   * stays exact while events are being written: no duplicates, no gaps.
   */
  async search(filters: AuditFilters, limit: number, cursor: string | null): Promise<AuditPage> {
    const before = cursor === null ? null : decodeCursor(cursor);
    const { where, params } = whereClause(filters, before === null ? [] : [['seq < ?', before]]);
    const rows = (await this.sql.all(`SELECT ${LISTED_COLUMNS} FROM audit_events ${where} ORDER BY seq DESC LIMIT ?`, [...params, limit + 1])) as Record<string, unknown>[];
    const items = rows.slice(0, limit).map((row) => ({ event: this.sql.hydrate(AuditEventEntity, row), detailChars: Number(row.detail_chars) }));
    return { items, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1].event.seq) : null };
  }

  async get(seq: number): Promise<AuditEventEntity | null> {
    const [event] = await this.sql.select(AuditEventEntity, { seq });
    return event ?? null;
  }

  /** Matching events oldest first, a page at a time, for streamed exports. */
  async *stream(filters: AuditFilters, pageSize = 1000): AsyncGenerator<AuditEventEntity> {
    let after = 0;
    for (;;) {
      const { where, params } = whereClause(filters, [['seq > ?', after]]);
      const sizes = (await this.sql.all(`SELECT seq, length(detail) AS size FROM audit_events ${where} ORDER BY seq ASC LIMIT ?`, [...params, pageSize])) as EventSize[];
      yield* this.wholeEvents(sizes);
      if (sizes.length < pageSize) return;
      after = Number(sizes[sizes.length - 1].seq);
    }
  }

  /**
   * Walks the chain from the retention anchor: sequence numbers must follow each other, each event must
   * name its predecessor's hash and hash to its own, and the last one must be the recorded head.
   * Reports the first sequence number where that fails.
   */
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
    const [head] = (await this.sql.all('SELECT seq, hash, anchor_seq, anchor_hash FROM audit_head WHERE id = 1')) as Record<string, string | number>[];
    const headSeq = Number(head.seq);
    const anchor = { seq: Number(head.anchor_seq), hash: String(head.anchor_hash) };
    const result = (firstBadSeq: number | null, reason: string | null, checked: number): Verification => ({
      ok: firstBadSeq === null,
      checked,
      firstBadSeq,
      reason,
      head: { seq: headSeq, hash: String(head.hash) },
      anchor,
    });
    let expectedSeq = anchor.seq + 1;
    let previous = anchor.hash;
    let checked = 0;
    for (;;) {
      const sizes = (await this.sql.all('SELECT seq, length(detail) AS size FROM audit_events WHERE seq >= ? AND seq <= ? ORDER BY seq ASC LIMIT ?', [expectedSeq, headSeq, VERIFY_PAGE])) as EventSize[];
      for await (const event of this.wholeEvents(sizes)) {
        if (Number(event.seq) !== expectedSeq) return result(expectedSeq, `event ${expectedSeq} is missing`, checked);
        if (event.prevHash !== previous) return result(expectedSeq, 'does not link to the previous event', checked);
        if (chainHash(previous, event) !== event.hash) return result(expectedSeq, 'its content does not match its hash', checked);
        previous = event.hash!;
        expectedSeq++;
        checked++;
      }
      if (sizes.length < VERIFY_PAGE) break;
      // Other requests get their turn between pages: on SQLite every read is synchronous, and a walk of
      // a million events would otherwise hold the event loop for seconds.
      await nextTurn();
    }
    if (expectedSeq - 1 !== headSeq || previous !== head.hash) {
      return result(expectedSeq, `the chain ends at ${expectedSeq - 1} but the head is at ${headSeq}`, checked);
    }
    // One statement, so that the head it compares with and the events it finds are of the same moment.
    const [beyond] = (await this.sql.all('SELECT MIN(seq) AS seq FROM audit_events WHERE seq > (SELECT seq FROM audit_head WHERE id = 1)')) as { seq: number | string | null }[];
    if (beyond.seq !== null) return result(Number(beyond.seq), `event ${beyond.seq} is beyond the head`, checked);
    const mismatch = checkpoint && (await this.checkpointMismatch(checkpoint, headSeq, anchor));
    return mismatch ? result(mismatch.seq, mismatch.reason, checked) : result(null, null, checked);
  }

  /**
   * The whole events `sizes` names, in order, read in groups of at most READ_DETAIL_CHARS of detail:
   * memory stays bounded by one group (or one event) whatever old, unbounded events the log holds.
   */
  private async *wholeEvents(sizes: EventSize[]): AsyncGenerator<AuditEventEntity> {
    for (let start = 0; start < sizes.length; ) {
      let end = start + 1;
      for (let chars = Number(sizes[start].size); end < sizes.length && chars + Number(sizes[end].size) <= READ_DETAIL_CHARS; end++) chars += Number(sizes[end].size);
      const group = sizes.slice(start, end).map((size) => size.seq);
      const rows = (await this.sql.all(`SELECT * FROM audit_events WHERE seq IN (${group.map(() => '?').join(', ')}) ORDER BY seq ASC`, group)) as Record<string, unknown>[];
      for (const row of rows) yield this.sql.hydrate(AuditEventEntity, row);
      start = end;
    }
  }

  private async anchorMovedFrom(anchorSeq: number): Promise<boolean> {
    const [head] = (await this.sql.all('SELECT anchor_seq FROM audit_head WHERE id = 1')) as { anchor_seq: number | string }[];
    return Number(head.anchor_seq) !== anchorSeq;
  }

  /** Why a verified chain contradicts the logged checkpoint, or null when it agrees (or was purged past it). */
  private async checkpointMismatch(checkpoint: Checkpoint, headSeq: number, anchor: Checkpoint): Promise<{ seq: number; reason: string } | null> {
    if (checkpoint.seq > headSeq) {
      return { seq: headSeq + 1, reason: `the logged checkpoint ${checkpoint.seq} is beyond the head ${headSeq}: events were removed from the end` };
    }
    // Retention removed events up to the anchor: one before it can no longer be compared, the anchor itself can.
    if (checkpoint.seq < anchor.seq) return null;
    const [row] = (await this.sql.all('SELECT hash FROM audit_events WHERE seq = ?', [checkpoint.seq])) as { hash: string }[];
    const hash = checkpoint.seq === anchor.seq ? anchor.hash : row?.hash;
    return hash === checkpoint.hash ? null : { seq: checkpoint.seq, reason: `event ${checkpoint.seq} does not match the logged checkpoint` };
  }
}

type EventSize = { seq: number | string; size: number | string };

function whereClause(filters: AuditFilters, extra: [string, unknown][]) {
  const parts: Condition[] = extra.map(([condition, value]) => [condition, [value]]);
  for (const [key, condition] of Object.entries(CONDITIONS) as [keyof AuditFilters, (value: string) => Condition][]) {
    if (filters[key] !== undefined) parts.push(condition(filters[key]!));
  }
  return { where: parts.length > 0 ? `WHERE ${parts.map(([condition]) => condition).join(' AND ')}` : '', params: parts.flatMap(([, values]) => values) };
}
