import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An agent conversation; its turns are the Tasks that carry its id. Not an HTTP transport session. */
@Entity('sessions')
export class SessionEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 320 })
  owner!: string;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt!: string;

  /** JSON ConversationTurn[]: earlier turns a Chat API client brought along when it started the session. */
  @Column({ type: 'text', nullable: true })
  prelude!: string | null;
}
