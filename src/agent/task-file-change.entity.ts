import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * How a Task changed a file: `created` (the file did not exist), `modified` (a write or edit of an
 * existing file), `restored` (an undo put it back as it was before another Task, which may mean removed).
 */
export type FileChangeKind = 'created' | 'modified' | 'restored';

/**
 * One file change of one Task, written with the `file_op` trace step that records it (same transaction,
 * TraceRepository.append). The session and owner are the Task's, copied so that the deliverables of a
 * user or a session are read from this table alone: `seq` is the newest-first keyset, and
 * `(session_id, path, seq)` finds whether a later change of the same file exists.
 */
@Entity('task_file_changes')
@Index('idx_task_file_changes_owner', ['owner', 'seq'])
@Index('idx_task_file_changes_session', ['sessionId', 'seq'])
@Index('idx_task_file_changes_path', ['sessionId', 'path', 'seq'])
@Index('idx_task_file_changes_task', ['taskId', 'seq'])
export class TaskFileChangeEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  seq!: number;

  @Column({ name: 'task_id', type: 'varchar', length: 36 })
  taskId!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 36 })
  sessionId!: string;

  @Column({ type: 'varchar', length: 320 })
  owner!: string;

  /** Relative to the session workspace, as the file tools name it. */
  @Column({ type: 'text' })
  path!: string;

  @Column({ type: 'varchar', length: 16 })
  kind!: FileChangeKind;

  /** The file's size after the change; null when the step did not say (a restore). */
  @Column({ type: 'integer', nullable: true })
  bytes!: number | null;

  /** When the step that made the change started. */
  @Column({ name: 'changed_at', type: 'varchar', length: 30 })
  changedAt!: string;
}
