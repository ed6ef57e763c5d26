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

  /** Base64 text exactly as submitted (what Ollama wants), so nothing is re-encoded on the run path. */
  @Column({ name: 'data_base64', type: 'text' })
  dataBase64!: string;
}
