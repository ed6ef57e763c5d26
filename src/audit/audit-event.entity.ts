import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One append-only audit record: who did what, when, with which outcome. */
@Entity('audit_events')
export class AuditEventEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  seq!: number;

  @Column({ type: 'varchar', length: 30 })
  at!: string;

  @Column({ type: 'varchar', length: 320 })
  actor!: string;

  @Column({ type: 'varchar', length: 16 })
  transport!: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  client!: string | null;

  /** `tools/call agent_run`, `tasks/cancel`, `task.status`... */
  @Column({ type: 'varchar', length: 64 })
  action!: string;

  @Column({ type: 'varchar', length: 16 })
  outcome!: string;

  @Column({ name: 'task_id', type: 'varchar', length: 36, nullable: true })
  taskId!: string | null;

  @Column({ name: 'session_id', type: 'varchar', length: 36, nullable: true })
  sessionId!: string | null;

  /** JSON: arguments summary, reason; never image data. */
  @Column({ type: 'text' })
  detail!: string;
}
