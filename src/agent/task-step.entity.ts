import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * `steer`: a person's correction reached the model; `limit`: a budget or round limit ended the tool work (issue 35);
 * `repair`: the service mended what the model sent (its name says which: RepairKind), as `npm run eval` counts.
 */
export type StepKind = 'plan' | 'model_call' | 'tool_call' | 'command' | 'file_op' | 'mcp_tool' | 'steer' | 'limit' | 'repair';

/**
 * The repairs a `repair` step names: tool calls recovered from the answer's text, native tool calls whose
 * arguments came as a JSON string and were parsed, old tool outputs compacted to fit the context.
 */
export type RepairKind = 'text_tool_calls' | 'string_arguments' | 'compaction';

/** The kinds of step that are a tool call (what usage, spans and metrics count as one). */
export const TOOL_STEP_KINDS: readonly StepKind[] = ['tool_call', 'command', 'file_op', 'mcp_tool'];

/** One step of a Task's execution trace: a model call, a tool call, a command, a file operation. */
@Entity('task_steps')
export class TaskStepEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  seq!: number;

  @Column({ name: 'task_id', type: 'varchar', length: 36 })
  taskId!: string;

  /** The plan subtask id the step belongs to ('' for the direct path and planning). */
  @Column({ type: 'varchar', length: 64, default: '' })
  subtask!: string;

  @Column({ type: 'varchar', length: 16 })
  kind!: StepKind;

  /** Tool name, command line excerpt, or `chat`. */
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  outcome!: string;

  @Column({ name: 'input_tokens', type: 'integer', default: 0 })
  inputTokens!: number;

  @Column({ name: 'output_tokens', type: 'integer', default: 0 })
  outputTokens!: number;

  @Column({ name: 'duration_ms', type: 'integer', default: 0 })
  durationMs!: number;

  /** JSON: arguments summary, exit code, output excerpt, path and size. */
  @Column({ type: 'text' })
  detail!: string;

  @Column({ name: 'started_at', type: 'varchar', length: 30 })
  startedAt!: string;
}
