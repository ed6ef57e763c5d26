import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Image input of a Task, kept so a queued Task still has its images after a restart. */
@Entity('task_images')
export class TaskImageEntity {
  @PrimaryColumn({ name: 'task_id', type: 'varchar', length: 36 })
  taskId!: string;

  @PrimaryColumn({ type: 'integer' })
  position!: number;

  @Column({ name: 'mime_type', type: 'varchar', length: 32 })
  mimeType!: string;

  @Column({ type: 'integer' })
  bytes!: number;

  @Column({ type: 'varchar', length: 64 })
  sha256!: string;

  /**
   * The image bytes, in the `data` column (BLOB on SQLite, BYTEA on PostgreSQL: a quarter smaller than
   * the Base64 text and bound without a copy). TypeORM has no binary column type that both databases
   * accept, so the entity does not map it: it is written and read with plain SQL (TasksRepository).
   */
  data!: Buffer;
}
