import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { PersonAskKind } from '../approvals/approval.entity.js';

/** What a run waits for: a person's approval, a choice, another server's form, or a correction to take (ADR 0020). */
export type RunWaitKind = PersonAskKind | 'steer';

/** `open` until the run takes it (or a person answers it); `dropped` when nobody will. */
export type RunWaitState = 'open' | 'taken' | 'dropped';

/** One wait of a run, in the table the run owns: the kind is a column, never a tool name. */
@Entity('run_waits')
@Index('idx_run_waits_task', ['taskId', 'kind', 'state', 'position'])
@Index('idx_run_waits_session', ['sessionId', 'state'])
@Index('idx_run_waits_approval', ['approvalId'])
export class RunWaitEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'task_id', type: 'varchar', length: 36 })
  taskId!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 36 })
  sessionId!: string;

  /** Who the wait is for: only they (or an admin, on the console) act on it. */
  @Column({ type: 'varchar', length: 320 })
  owner!: string;

  @Column({ type: 'varchar', length: 16 })
  kind!: RunWaitKind;

  @Column({ type: 'varchar', length: 16 })
  state!: RunWaitState;

  /** The approvals row a person is shown (approval, question, form); null for a correction. */
  @Column({ name: 'approval_id', type: 'varchar', length: 36, nullable: true })
  approvalId!: string | null;

  /** The RunState to continue from (encodeRunState), for a pause. */
  @Column({ type: 'text', nullable: true })
  resume!: string | null;

  /** A correction's text, as the person sent it (bounded like a request). */
  @Column({ type: 'text', nullable: true })
  body!: string | null;

  /** A correction's number within its Task (1, 2, …): the order the model reads them in. */
  @Column({ type: 'integer', default: 0 })
  position!: number;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt!: string;

  @Column({ name: 'taken_at', type: 'varchar', length: 30, nullable: true })
  takenAt!: string | null;
}
