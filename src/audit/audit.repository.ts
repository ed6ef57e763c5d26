import { Injectable } from '@nestjs/common';
import { PlainSql, sqlStep, type TransactionSteps } from '../database/plain-sql.js';
import { AuditEventEntity } from './audit-event.entity.js';

/** The chain's head (last event) and anchor (last event removed by retention, where verification starts). */
export interface ChainLink {
  seq: number;
  hash: string;
}

export interface AuditHead {
  head: ChainLink;
  anchor: ChainLink;
}

/** What one purge transaction removed. */
export interface PurgedChunk {
  count: number;
  toSeq: number;
  hash: string;
}

/** Conditions of a search, ANDed, each with the values its placeholders bind. */
export type AuditConditions = [condition: string, params: unknown[]][];

/** An event's number and the length of its detail text. */
export interface EventSize {
  seq: number;
  size: number;
}

function whereOf(conditions: AuditConditions) {
  return {
    where: conditions.length > 0 ? `WHERE ${conditions.map(([condition]) => condition).join(' AND ')}` : '',
    params: conditions.flatMap(([, params]) => params),
  };
}

// Updating the head's single row first takes the write lock (SQLite) or the row lock (PostgreSQL).
const LOCK_HEAD = 'UPDATE audit_head SET purging = purging WHERE id = 1';
const READ_HEAD = 'SELECT seq, hash FROM audit_head WHERE id = 1';
const MOVE_HEAD = 'UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1';

/** I/O for the audit log: `audit_events` and its one-row `audit_head`. No rules here. */
@Injectable()
export class AuditRepository {
  constructor(private readonly sql: PlainSql) {}

  /**
   * The steps that append `events` after the current head, around the rest of a unit of work's
   * transaction (`inside`): lock and read the head, run `inside`, let `link` number and hash the
   * events after the head, insert them, move the head.
   */
  *append(events: AuditEventEntity[], link: (head: ChainLink, events: AuditEventEntity[]) => ChainLink, inside: TransactionSteps<void>): TransactionSteps<void> {
    yield sqlStep.run(LOCK_HEAD);
    const [current] = (yield sqlStep.all(READ_HEAD)) as { seq: number | string; hash: string }[];
    yield* inside;
    const head = link({ seq: Number(current.seq), hash: current.hash }, events);
    yield sqlStep.insert(AuditEventEntity, events);
    yield sqlStep.run(MOVE_HEAD, [head.seq, head.hash]);
  }

  async head(): Promise<AuditHead> {
    const [row] = await this.sql.all<Record<string, string | number>>('SELECT seq, hash, anchor_seq, anchor_hash FROM audit_head WHERE id = 1');
    return { head: { seq: Number(row.seq), hash: String(row.hash) }, anchor: { seq: Number(row.anchor_seq), hash: String(row.anchor_hash) } };
  }

  async anchorSeq(): Promise<number> {
    const [row] = await this.sql.all<{ anchor_seq: number | string }>('SELECT anchor_seq FROM audit_head WHERE id = 1');
    return Number(row.anchor_seq);
  }

  /**
   * Events matching `conditions`, newest first, at most `limit`, as a listing reads them: `client` and
   * `detail` cut in the query (detail to `detailChars`), with the length of the whole detail.
   */
  async listed(conditions: AuditConditions, limit: number, detailChars: number): Promise<{ event: AuditEventEntity; detailChars: number }[]> {
    const columns = `seq, at, actor, groups, source, transport, substr(client, 1, 200) AS client, action, outcome, task_id, session_id,
  substr(detail, 1, ${Math.trunc(detailChars)}) AS detail, length(detail) AS detail_chars, prev_hash, hash`;
    const { where, params } = whereOf(conditions);
    const rows = await this.sql.all(`SELECT ${columns} FROM audit_events ${where} ORDER BY seq DESC LIMIT ?`, [...params, limit]);
    return rows.map((row) => ({ event: this.sql.hydrate(AuditEventEntity, row), detailChars: Number(row.detail_chars) }));
  }

  /** `seq` and detail length of the events matching `conditions`, oldest first, at most `limit`. */
  async sizes(conditions: AuditConditions, limit: number): Promise<EventSize[]> {
    const { where, params } = whereOf(conditions);
    const rows = await this.sql.all<Record<string, number | string>>(`SELECT seq, length(detail) AS size FROM audit_events ${where} ORDER BY seq ASC LIMIT ?`, [...params, limit]);
    return rows.map((row) => ({ seq: Number(row.seq), size: Number(row.size) }));
  }

  /**
   * The whole events matching `filters` (conditions on anything but `seq`) from `first` to `last`,
   * oldest first: a range of what `sizes` listed, read in one scan rather than looked up one number
   * at a time (`IN` with a thousand placeholders). Other bounds on `seq` are left out on purpose: the
   * database bounds the scan by one pair only, and may pick the wider one.
   */
  async between(filters: AuditConditions, first: number, last: number): Promise<AuditEventEntity[]> {
    const { where, params } = whereOf([...filters, ['seq >= ?', [first]], ['seq <= ?', [last]]]);
    return this.sql.entities(AuditEventEntity, `SELECT * FROM audit_events ${where} ORDER BY seq ASC`, params);
  }

  async get(seq: number): Promise<AuditEventEntity | null> {
    const [event] = await this.sql.select(AuditEventEntity, { seq });
    return event ?? null;
  }

  async hashAt(seq: number): Promise<string | null> {
    const [row] = await this.sql.all<{ hash: string }>('SELECT hash FROM audit_events WHERE seq = ?', [seq]);
    return row?.hash ?? null;
  }

  /** The lowest `seq` beyond the head, or null. One statement, so the head and the events are of the same moment. */
  async firstBeyondHead(): Promise<number | null> {
    const [row] = await this.sql.all<{ seq: number | string | null }>('SELECT MIN(seq) AS seq FROM audit_events WHERE seq > (SELECT seq FROM audit_head WHERE id = 1)');
    return row.seq === null ? null : Number(row.seq);
  }

  /** The newest event older than `before`, or null. */
  async lastSeqBefore(before: string): Promise<number | null> {
    const [row] = await this.sql.all<{ seq: number | string }>('SELECT seq FROM audit_events WHERE at < ? ORDER BY seq DESC LIMIT 1', [before]);
    return row ? Number(row.seq) : null;
  }

  /**
   * One purge transaction: deletes from the anchor up to `through`, at most `chunkSize` events, and
   * moves the anchor to the last one deleted. The delete is the only one the triggers allow (while the
   * head's `purging` flag is set, inside this transaction). Null when there was nothing left to delete
   * (another replica purged up to here already).
   */
  purgeChunk(through: number, chunkSize: number): Promise<PurgedChunk | null> {
    return this.sql.transaction(function* () {
      yield sqlStep.run('UPDATE audit_head SET purging = 1 WHERE id = 1');
      const [head] = (yield sqlStep.all('SELECT anchor_seq FROM audit_head WHERE id = 1')) as { anchor_seq: number | string }[];
      const toSeq = Math.min(through, Number(head.anchor_seq) + chunkSize);
      const [end] = (yield sqlStep.all('SELECT hash FROM audit_events WHERE seq = ?', [toSeq])) as { hash: string }[];
      let purged: PurgedChunk | null = null;
      if (end) {
        const [{ n }] = (yield sqlStep.all('SELECT COUNT(*) AS n FROM audit_events WHERE seq <= ?', [toSeq])) as { n: number | string }[];
        yield sqlStep.run('DELETE FROM audit_events WHERE seq <= ?', [toSeq]);
        yield sqlStep.run('UPDATE audit_head SET anchor_seq = ?, anchor_hash = ? WHERE id = 1', [toSeq, end.hash]);
        purged = { count: Number(n), toSeq, hash: end.hash };
      }
      yield sqlStep.run('UPDATE audit_head SET purging = 0 WHERE id = 1');
      return purged;
    });
  }
}
