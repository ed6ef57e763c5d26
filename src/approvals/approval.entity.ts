import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** `pending` until answered; the other states are final. */
export type ApprovalState = 'pending' | 'granted' | 'denied' | 'dropped' | 'cancelled';

/**
 * What a person is asked (ADR 0020 §2): to approve an action (a command, a file change, another server's
 * tool), to choose an option of a question, or to fill another MCP server's form. The run's wait row
 * (`run_waits.kind`) has the same kind; the texts and answers of a row depend on it, never on `tool`.
 */
export type PersonAskKind = 'approval' | 'question' | 'form';

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

  @Column({ type: 'varchar', length: 16 })
  kind!: PersonAskKind;

  /** What asked: `run_command`, `write_file`, `edit_file` or `mcp_tool` (an approval); `ask_user` (a question); `mcp_elicitation` (a form). */
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

  /** Rows stored before the run's waits (issue 35) only: the RunState to continue from. New rows leave it empty: the run's wait row holds it. */
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
