import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { TaskStatus } from './task-status.js';

/**
 * One agent Task. `seq` is the FIFO order (an integer key both SQLite and PostgreSQL generate in insert
 * order); `id` is the public UUID, which is also the MCP Tasks extension task id.
 */
@Entity('tasks')
export class TaskEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  seq!: number;

  @Index({ unique: true })
  @Column({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 36 })
  sessionId!: string;

  @Column({ type: 'varchar', length: 320 })
  owner!: string;

  /** The owner's groups at submission, as a JSON list (an MCP server's `allow_groups` is checked against them). */
  @Column({ name: 'owner_groups', type: 'text', default: '[]' })
  ownerGroups!: string;

  /** The owner's email at submission, when the identity gave one (an MCP server's `{email}` header names it). */
  @Column({ name: 'owner_email', type: 'varchar', length: 320, nullable: true })
  ownerEmail!: string | null;

  @Column({ type: 'text' })
  request!: string;

  @Column({ type: 'double precision', nullable: true })
  temperature!: number | null;

  @Column({ type: 'varchar', length: 16 })
  status!: TaskStatus;

  @Column({ name: 'completed_subtasks', type: 'integer', default: 0 })
  completedSubtasks!: number;

  @Column({ name: 'total_subtasks', type: 'integer', default: 1 })
  totalSubtasks!: number;

  @Column({ name: 'current_task', type: 'varchar', length: 200, default: '' })
  currentTask!: string;

  @Column({ name: 'input_tokens', type: 'integer', default: 0 })
  inputTokens!: number;

  @Column({ name: 'output_tokens', type: 'integer', default: 0 })
  outputTokens!: number;

  @Column({ name: 'critical_path_tokens', type: 'integer', default: 0 })
  criticalPathTokens!: number;

  /** The MCP client (name/version) whose agent_run created the Task. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  client!: string | null;

  /** The surface that accepted it (`mcp-http`, `stdio`, `chat`, `a2a`); null for Tasks older than the column. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  surface!: string | null;

  /** That request declared the Tasks extension, so its client can answer approvals in place. */
  @Column({ name: 'answers_in_place', type: 'boolean', default: false })
  answersInPlace!: boolean;

  /** Issue 38: what an action that needs a person does in a Task nobody watches (`deny`, `wait`); null when a person started it. */
  @Column({ name: 'unattended', type: 'varchar', length: 8, nullable: true })
  unattended!: 'deny' | 'wait' | null;

  /** `agent`: tools and the workspace; `direct`: one model call, no tools, no workspace. */
  @Column({ type: 'varchar', length: 8, default: 'agent' })
  mode!: 'agent' | 'direct';

  /** The model tier (`default` is `ollama.model`; others are `ollama.models` keys). */
  @Column({ type: 'varchar', length: 32, default: 'default' })
  tier!: string;

  /** Issue 35: the budgets the request lowered (JSON, RunBudgets' keys), or null: `agent.budgets` as configured. */
  @Column({ type: 'text', nullable: true })
  budget!: string | null;

  /** Issue 35: the limit that ended the Task's tool work (`max_tool_calls`, …); it completed with a summary. */
  @Column({ name: 'stopped_by', type: 'varchar', length: 32, nullable: true })
  stoppedBy!: string | null;

  /** Issue 35: corrections accepted for the Task while it ran (steering), and whether it takes no more. */
  @Column({ name: 'steer_count', type: 'integer', default: 0 })
  steerCount!: number;

  @Column({ name: 'steering_closed', type: 'boolean', default: false })
  steeringClosed!: boolean;

  /** The Task's trace (issue 39): its trace and span ids; null when telemetry was off and no caller sent a traceparent. */
  @Column({ name: 'trace_id', type: 'varchar', length: 32, nullable: true })
  traceId!: string | null;

  @Column({ name: 'span_id', type: 'varchar', length: 16, nullable: true })
  spanId!: string | null;

  /** The caller's W3C `traceparent` the Task's span continues, and its `tracestate`. */
  @Column({ name: 'trace_parent', type: 'varchar', length: 55, nullable: true })
  traceParent!: string | null;

  @Column({ name: 'trace_state', type: 'varchar', length: 512, nullable: true })
  traceState!: string | null;

  /** Final answer (completed) or failure reason (failed/cancelled). */
  @Column({ type: 'text', nullable: true })
  result!: string | null;

  @Column({ name: 'cancel_requested', type: 'boolean', default: false })
  cancelRequested!: boolean;

  /** Fencing token: incremented by every claim; a runner's writes must carry the attempt it claimed. */
  @Column({ type: 'integer', default: 0 })
  attempt!: number;

  @Column({ name: 'lease_owner', type: 'varchar', length: 200, nullable: true })
  leaseOwner!: string | null;

  /** Database time until which the owner's claim holds; renewed by its heartbeat. */
  @Column({ name: 'lease_expires_at', type: 'varchar', length: 30, nullable: true })
  leaseExpiresAt!: string | null;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt!: string;

  @Column({ name: 'updated_at', type: 'varchar', length: 30 })
  updatedAt!: string;

  @Column({ name: 'started_at', type: 'varchar', length: 30, nullable: true })
  startedAt!: string | null;

  @Column({ name: 'finished_at', type: 'varchar', length: 30, nullable: true })
  finishedAt!: string | null;
}
