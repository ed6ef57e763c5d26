import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One append-only, hash-chained audit record: who did what, when, from where, with which outcome. */
@Entity('audit_events')
export class AuditEventEntity {
  /** Assigned by the audit writer from the chain head: gapless and in commit order. */
  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  /** UTC, ISO-8601 with milliseconds. */
  @Column({ type: 'varchar', length: 30 })
  at!: string;

  @Column({ type: 'varchar', length: 320 })
  actor!: string;

  /** JSON array of the actor's groups. */
  @Column({ type: 'text', nullable: true })
  groups!: string | null;

  /** The client's network address, when the request came over HTTP. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  source!: string | null;

  @Column({ type: 'varchar', length: 16 })
  transport!: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  client!: string | null;

  /** `tools/call agent_run`, `tasks/cancel`, `task.status`, `auth.fail`, `admin.audit_read`... */
  @Column({ type: 'varchar', length: 64 })
  action!: string;

  /** `ok`, `rejected` (refused input or access) or `error`. */
  @Column({ type: 'varchar', length: 16 })
  outcome!: string;

  @Column({ name: 'task_id', type: 'varchar', length: 36, nullable: true })
  taskId!: string | null;

  @Column({ name: 'session_id', type: 'varchar', length: 36, nullable: true })
  sessionId!: string | null;

  /** JSON: arguments summary and reason, secrets redacted; never image data. */
  @Column({ type: 'text' })
  detail!: string;

  @Column({ name: 'prev_hash', type: 'varchar', length: 64, nullable: true })
  prevHash!: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  hash!: string | null;
}
