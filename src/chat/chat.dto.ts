import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/**
 * The Chat API's shapes for the OpenAPI document only: requests are validated by parseChatRequest
 * (OpenAI's error shape, agent_run's image rules), not by class-validator.
 */
export class ChatContentPartDto {
  @ApiProperty({ enum: ['text', 'image_url'] }) type!: string;
  @ApiPropertyOptional() text?: string;
  @ApiPropertyOptional({ description: '{ "url": "data:image/png;base64,..." } (PNG, JPEG or WebP; remote URLs are refused)' }) image_url?: { url: string };
}

class ChatMessageDto {
  @ApiProperty({ enum: ['system', 'developer', 'user', 'assistant'] }) role!: string;
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#/components/schemas/ChatContentPartDto' } }] }) content!: string | ChatContentPartDto[];
}

export class ChatCompletionRequestDto {
  @ApiProperty({
    description: 'An id GET /v1/models lists: chat.model_id (the agent), <id>-direct (one answer, no tools), <id>-<tier> (a tier of ollama.models)',
    example: 'ollama-agent',
  })
  model!: string;
  @ApiProperty({ type: [ChatMessageDto], description: 'The last message is the request (role user); earlier ones start a new session’s history' }) messages!: ChatMessageDto[];
  @ApiPropertyOptional({ minimum: 0, maximum: 2, nullable: true }) temperature?: number | null;
  @ApiPropertyOptional({ default: false }) stream?: boolean;
  @ApiPropertyOptional({ format: 'uuid', nullable: true, description: 'Extension: continue this session (one of the caller’s, from any surface)' }) session_id?: string | null;
  @ApiPropertyOptional({ nullable: true, description: 'Extension: false answers in one model call without tools or workspace (as the model id <id>-direct)' }) agent_mode?:
    boolean | null;
  @ApiPropertyOptional({ nullable: true, description: 'Extension: the model tier (default, or a key of ollama.models)', example: 'default' }) agent_level?: string | null;
  @ApiPropertyOptional({
    nullable: true,
    description:
      'Extension (issue 35): true with the session_id of a session whose Task is running: the text is a correction the Task reads at its next step; ' +
      'answered at once with that task_id, status running and agent_state steered. While the session’s Task waits for a person the correction answers nothing: it is kept (agent_state kept, that Task’s id and status) and the model reads it with the answer; approve / deny / an option still answer. A Task no longer running makes it the session’s next Task (agent_state follow_up). ' +
      'Without it (the default) the request queues behind the running Task.',
  })
  agent_steer?: boolean | null;
  @ApiPropertyOptional({
    nullable: true,
    description:
      'Extension (issue 35): lower budgets for this Task (positive integers; never above agent.budgets): max_model_calls, max_tool_calls, max_tokens, max_wall_ms. ' +
      'A budget reached ends the tool work with one summary call; the Task completes with it.',
    example: { max_tool_calls: 20 },
  })
  agent_budget?: Record<string, number> | null;
}

class ChatUsageDto {
  @ApiProperty() prompt_tokens!: number;
  @ApiProperty() completion_tokens!: number;
  @ApiProperty() total_tokens!: number;
}

class ChatChoiceDto {
  @ApiProperty() index!: number;
  @ApiProperty({ example: { role: 'assistant', content: '...' } }) message!: { role: string; content: string };
  @ApiProperty({ enum: ['stop', 'error'], description: '`error` when the Task failed or was cancelled; the content is the reason' }) finish_reason!: string;
}

export class ChatCompletionDto {
  @ApiProperty() id!: string;
  @ApiProperty({ example: 'chat.completion' }) object!: string;
  @ApiProperty() created!: number;
  @ApiProperty() model!: string;
  @ApiProperty({ type: [ChatChoiceDto] }) choices!: ChatChoiceDto[];
  @ApiProperty({ type: ChatUsageDto, description: 'The Task’s token counts' }) usage!: ChatUsageDto;
  @ApiProperty({ format: 'uuid' }) task_id!: string;
  @ApiProperty({ format: 'uuid' }) session_id!: string;
  @ApiProperty({ enum: ['completed', 'failed', 'cancelled', 'running'], description: '`running` only for a correction (agent_state steered)' }) status!: string;
  @ApiPropertyOptional({
    enum: ['input_required', 'steered', 'kept', 'follow_up'],
    description:
      'input_required: the Task waits for the session’s next message; steered: the running Task took this correction; kept: the session’s Task waits for a person and its model reads this correction with the answer; follow_up: the correction became the session’s next Task',
  })
  agent_state?: string;
  @ApiProperty({ required: false, description: 'The Task’s OpenTelemetry trace id (its own, or the one of the `traceparent` the request sent); absent when it has none' })
  agent_trace_id?: string;
  @ApiProperty({ type: [String], description: 'agent-session:// URIs of the files the Task created or changed (readable as MCP resources)' }) deliverables!: string[];
}

class ChatModelDto {
  @ApiProperty() id!: string;
  @ApiProperty({ example: 'model' }) object!: string;
  @ApiProperty() created!: number;
  @ApiProperty() owned_by!: string;
}

export class ChatModelListDto {
  @ApiProperty({ example: 'list' }) object!: string;
  @ApiProperty({ type: [ChatModelDto] }) data!: ChatModelDto[];
}

class ChatTaskRefDto {
  @ApiProperty({ format: 'uuid' }) task_id!: string;
  @ApiProperty({ format: 'uuid' }) session_id!: string;
  @ApiProperty() status!: string;
}

export class ChatCancellationDto {
  @ApiProperty({ example: 'chat.cancellation' }) object!: string;
  @ApiProperty({ format: 'uuid' }) session_id!: string;
  @ApiProperty({ type: [ChatTaskRefDto], description: 'The Tasks that were queued or running, as they are after the request' }) tasks!: ChatTaskRefDto[];
}

class ChatErrorBodyDto {
  @ApiProperty() message!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ nullable: true, type: String }) param!: string | null;
  @ApiProperty({ nullable: true, type: String }) code!: string | null;
}

export class ChatErrorDto {
  @ApiProperty({ type: ChatErrorBodyDto }) error!: ChatErrorBodyDto;
}
