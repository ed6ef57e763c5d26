import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** `pending` until answered; the other states are final. */
export type ApprovalState = 'pending' | 'granted' | 'denied' | 'dropped' | 'cancelled';

/**
 * An action the agent wants to take and a person must approve: stored with its session, so it
 * survives restarts and is visible on every replica. `id` is also the Tasks extension input key.
 */
@Entity('approvals')
@Index('idx_approvals_session_state', ['sessionId', 'state'])
@Index('idx_approvals_task', ['taskId'])
export class ApprovalEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** The Task that asked. */
  @Column({ name: 'task_id', type: 'varchar', length: 36 })
  taskId!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 36 })
  sessionId!: string;

  /** The session's owner: the only person who may answer. */
  @Column({ type: 'varchar', length: 320 })
  owner!: string;

  /** `run_command`, `write_file`, `edit_file` or `mcp_tool`; `ask_user` for a question with choices; `mcp_elicitation` for another server's form. */
  @Column({ type: 'varchar', length: 32 })
  tool!: string;

  /** The command text, the path of the file change, the question, or the message of a server's form. */
  @Column({ type: 'text' })
  subject!: string;

  /** The bounded unified diff of a file change. */
  @Column({ type: 'text', nullable: true })
  diff!: string | null;

  @Column({ name: 'diff_sha256', type: 'varchar', length: 64, nullable: true })
  diffSha256!: string | null;

  /** A question's options (`ask_user`), as a JSON array of strings; null for an action to approve. */
  @Column({ type: 'text', nullable: true })
  options!: string | null;

  /** An MCP server's form (`mcp_elicitation`), as JSON: the server, its tool being called, the form's schema (StoredForm). */
  @Column({ type: 'text', nullable: true })
  form!: string | null;

  /** JSON: the run's state (RunState) to continue from, written when the run stopped for this request. */
  @Column({ type: 'text' })
  resume!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: ApprovalState;

  /** A Task holds its slot and waits for an in-place answer (Tasks extension). */
  @Column({ type: 'boolean', default: false })
  waiting!: boolean;

  @Column({ name: 'answered_by', type: 'varchar', length: 320, nullable: true })
  answeredBy!: string | null;

  @Column({ name: 'answered_client', type: 'varchar', length: 200, nullable: true })
  answeredClient!: string | null;

  /** `in_place` (tasks/update) or `conversation` (the next agent_run of the session). */
  @Column({ name: 'answered_via', type: 'varchar', length: 16, nullable: true })
  answeredVia!: string | null;

  /** Why it was refused; for an answered question, the option chosen; for a form, `decline`/`cancel` or the content given (JSON). */
  @Column({ type: 'text', nullable: true })
  reason!: string | null;

  /** The Task that took the answer from the conversation and continued. */
  @Column({ name: 'answer_task_id', type: 'varchar', length: 36, nullable: true })
  answerTaskId!: string | null;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt!: string;

  @Column({ name: 'answered_at', type: 'varchar', length: 30, nullable: true })
  answeredAt!: string | null;
}
